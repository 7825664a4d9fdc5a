//! Machine profiles: the data types, the built-in platform files and the loader/validator.
//!
//! The files live in `platforms/*.toml` at the repository root and are embedded with
//! `include_str!`; a user file is read the same way. The schema is documented in
//! `platforms/README.md` and in the crate docs.

use std::collections::BTreeMap;
use std::path::Path;

use schedlab_engine::Nanos;

use crate::cost::{
    scale_ns, CostModel, ProgramCostKind, ProgramCosts, StorageDevice, COST_FIELDS, LATENCY_FIELDS,
    PROGRAM_COST_FIELDS, STORAGE_DEVICES,
};
use crate::cpumask::CpuMask;
use crate::error::PlatformError;
use crate::toml_tree::{has_key, merge, take_key, Ctx, Docs, Kind, Node, Provenance, Tbl};
use crate::topology::SchedDomains;

/// `SCHED_CAPACITY_SCALE`: capacity of the biggest CPU at its maximum frequency.
pub const SCHED_CAPACITY_SCALE: u32 = 1024;
/// `LOCAL_DISTANCE` of the NUMA distance table.
pub const LOCAL_DISTANCE: u32 = 10;
/// Largest machine accepted (the simulator is meant for up to a few hundred CPUs).
pub const MAX_CPUS: usize = 4096;

/// Preemption model (rt-dl.md §1.7, §1.9), spelled as in `/sys/kernel/debug/sched/preempt`
/// (`rt` for `CONFIG_PREEMPT_RT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PreemptModel {
    None,
    Voluntary,
    Full,
    Lazy,
    Rt,
}

impl PreemptModel {
    pub const ALL: [PreemptModel; 5] = [
        PreemptModel::None,
        PreemptModel::Voluntary,
        PreemptModel::Full,
        PreemptModel::Lazy,
        PreemptModel::Rt,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PreemptModel::None => "none",
            PreemptModel::Voluntary => "voluntary",
            PreemptModel::Full => "full",
            PreemptModel::Lazy => "lazy",
            PreemptModel::Rt => "rt",
        }
    }

    pub fn parse(s: &str) -> Option<PreemptModel> {
        PreemptModel::ALL.into_iter().find(|m| m.name() == s)
    }
}

/// Which topology level carries `SD_SHARE_LLC` at the top (smp.md §4.1.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LlcLevel {
    /// The firmware describes the shared LLC; the `MC` level spans it (the usual case).
    Mc,
    /// The firmware describes no shared LLC: the `MC` level is skipped (arm64 "Skip MC sched
    /// domain on SoCs with no LLC") and the cluster level `CLS` is the `SD_SHARE_LLC` level,
    /// e.g. Ampere Altra. The `llc` ids must then equal the `cluster` ids.
    Cls,
}

/// cpufreq governor (smp.md §7.3). The simulator runs each CPU at `freq_cur_khz`; the
/// governor is recorded so that a DVFS model can use it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Governor {
    /// No cpufreq driver (`CONFIG_CPU_FREQ` not set, or a VM): fixed frequency.
    None,
    Performance,
    Ondemand,
    Schedutil,
}

impl Governor {
    pub fn name(self) -> &'static str {
        match self {
            Governor::None => "none",
            Governor::Performance => "performance",
            Governor::Ondemand => "ondemand",
            Governor::Schedutil => "schedutil",
        }
    }
}

/// One cpuidle state (smp.md §7.2; kernel `struct cpuidle_state`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdleState {
    pub name: String,
    /// Time from the wake-up signal until the CPU runs again: what the simulator charges as
    /// `idle_exit(state)` (workloads.md §0.2). For DT states this is `exit-latency-us`.
    pub exit_latency_ns: Nanos,
    /// Minimum residency for the state to pay off (`min-residency-us` in DT).
    pub target_residency_ns: Nanos,
    /// DT `entry-latency-us` (0 where the source gives none). Linux's `dt_idle_states` reports
    /// `entry + exit` as the cpuidle exit latency seen by the governor: see
    /// [`IdleState::governor_exit_latency_ns`].
    pub entry_latency_ns: Nanos,
    /// `CPUIDLE_FLAG_POLLING`: the CPU spins with `TIF_POLLING_NRFLAG` set (no IPI needed).
    pub polling: bool,
}

impl IdleState {
    /// The worst-case latency a cpuidle governor compares with the latency QoS limit
    /// (DT states: entry + exit, as `dt_init_idle_driver()` computes it).
    pub fn governor_exit_latency_ns(&self) -> Nanos {
        self.entry_latency_ns + self.exit_latency_ns
    }
}

/// A power state entered only when all CPUs of `cpus` are idle (PSCI OS-initiated cluster
/// state, e.g. the RB5 `cluster-sleep-0` of smp.md §7.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterIdleState {
    pub name: String,
    pub cpus: CpuMask,
    pub entry_latency_ns: Nanos,
    pub exit_latency_ns: Nanos,
    pub target_residency_ns: Nanos,
}

/// Boot-time CPU isolation (`isolcpus=`, `nohz_full=`, `rcu_nocbs=`; rt-dl.md §2.8).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Isolation {
    /// The CPU list of `isolcpus=`.
    pub isolcpus: CpuMask,
    /// `isolcpus=domain` (also implied when no flag is given): no sched domains, not in any
    /// other CPU's domain span, own root domain.
    pub domain: bool,
    /// `isolcpus=nohz`.
    pub nohz: bool,
    /// `isolcpus=managed_irq`.
    pub managed_irq: bool,
    /// `nohz_full=`: tick stopped while a single task runs.
    pub nohz_full: CpuMask,
    /// `rcu_nocbs=`: RCU callbacks offloaded.
    pub rcu_nocbs: CpuMask,
}

/// A group of identical CPUs: capacity, frequency, idle states and (optionally) their own
/// cost column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuClass {
    pub name: String,
    pub cpus: CpuMask,
    /// `arch_scale_cpu_capacity()` (`/sys/devices/system/cpu/cpuN/cpu_capacity`).
    pub capacity_orig: u32,
    /// DT `capacity-dmips-mhz`, when the capacity was derived from it (smp.md §6.1).
    pub capacity_dmips_mhz: Option<u32>,
    pub freq_max_khz: u32,
    /// The fixed running frequency (= `freq_max_khz` unless overridden).
    pub freq_cur_khz: u32,
    /// cpuidle states, shallowest first.
    pub idle_states: Vec<IdleState>,
    /// Cost fields this class overrides (`[cpu_class.costs]`), in file order.
    pub cost_overrides: Vec<&'static str>,
    /// The resolved cost model of these CPUs (module docs of [`crate::cost`]).
    pub costs: CostModel,
}

/// Per-CPU topology and capacity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuInfo {
    pub cpu: usize,
    /// Index into [`Platform::classes`].
    pub class: usize,
    /// CPUs with the same `core_id` are SMT siblings (`topology_sibling_cpumask`).
    pub core_id: u32,
    /// CPUs with the same `cluster_id` share a cluster (`cluster_cpus`).
    pub cluster_id: u32,
    /// CPUs with the same `llc_id` share the last-level cache as the scheduler sees it.
    pub llc_id: u32,
    pub package_id: u32,
    /// NUMA node, an index into [`Platform::numa_distance`].
    pub node: u32,
    pub capacity_orig: u32,
    pub freq_max_khz: u32,
    pub freq_cur_khz: u32,
}

/// A machine profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Platform {
    pub name: String,
    pub description: String,
    /// File name of the profile (`platforms/rpi5.toml` for built-ins).
    pub source: String,
    /// Free-form provenance notes (spec sections, "unverified" items).
    pub notes: Vec<String>,
    pub cpus: Vec<CpuInfo>,
    pub classes: Vec<CpuClass>,
    /// `node_distance(a, b)`, `[a][b]`; `[[10]]` for one node.
    pub numa_distance: Vec<Vec<u32>>,
    pub llc_level: LlcLevel,
    /// Throughput of each SMT sibling when both are busy, parts per million of a lone
    /// thread (0.60 → 600 000; workloads.md §11.3). 1 000 000 on machines without SMT.
    pub smt_throughput_ppm: u32,
    /// `CONFIG_HZ`.
    pub hz: u32,
    /// Default preemption model (a kernel preset may override it, rt-dl.md §1.9).
    pub preempt: PreemptModel,
    /// `CONFIG_PREEMPT_DYNAMIC`: the model can be changed at boot (`preempt=`).
    pub preempt_dynamic: bool,
    /// `CONFIG_RT_GROUP_SCHED`: with it the root group's RT throttling (950/1000 ms) outlives
    /// 5f6bd380c7bd (v6.12+), rt-dl.md §2.10. `[kernel] rt_group_sched`, default false.
    pub rt_group_sched: bool,
    /// Frequency of the counter behind `sched_clock()` (the arm64 architected timer,
    /// `CNTFRQ_EL0`; the TSC on x86, which `cyc2ns` turns into 1 ns steps). The runqueue clock
    /// only moves in steps of one counter tick, which decides exact ties in `update_curr`
    /// arithmetic (1 000 000 000 = 1 ns resolution).
    pub sched_clock_hz: u64,
    pub isolation: Isolation,
    /// `relax_domain_level=` boot parameter (levels at or above lose `SD_BALANCE_WAKE` and
    /// `SD_BALANCE_NEWIDLE`), `None` when not given.
    pub relax_domain_level: Option<u32>,
    pub governor: Governor,
    /// cpufreq policies.
    pub freq_domains: Vec<CpuMask>,
    pub cluster_idle_states: Vec<ClusterIdleState>,
    /// The `[costs]` column as written: costs on the reference core.
    pub costs: CostModel,
    /// Capacity of the reference core the `[costs]` column was measured on.
    pub reference_capacity: u32,
    pub storage: StorageDevice,
    /// `[programs.NAME]`: per-platform costs of user-space work in the modelled programs.
    pub programs: ProgramCosts,
    /// Where every value came from: key path (`costs.c_ttwu`, `cpu_class[0].capacity`) →
    /// `file:line` and the trailing comment on that line.
    pub provenance: BTreeMap<String, Provenance>,
}

struct Builtin {
    name: &'static str,
    file: &'static str,
    text: &'static str,
}

macro_rules! builtin {
    ($name:literal, $file:literal) => {
        Builtin {
            name: $name,
            file: concat!("platforms/", $file),
            text: include_str!(concat!("../../../platforms/", $file)),
        }
    };
}

/// Built-in platforms in the order `list_builtin` shows them.
const BUILTINS: &[Builtin] = &[
    builtin!("rpi5", "rpi5.toml"),
    builtin!("rpi5-2.4", "rpi5-2.4.toml"),
    builtin!("rpi4-rt", "rpi4-rt.toml"),
    builtin!("xeon-2s-64", "xeon-2s-64.toml"),
    builtin!("altra-80", "altra-80.toml"),
    builtin!("altra-80-llc80", "altra-80-llc80.toml"),
    builtin!("rb5", "rb5.toml"),
    builtin!("x86-2s-80", "x86-2s-80.toml"),
    builtin!("host", "host.toml"),
];

/// The template behind `smp:N` (not loadable on its own: it has no CPU count).
const SMP_TEMPLATE: Builtin = builtin!("smp", "smp.toml");

/// Largest N of `smp:N`.
pub const SMP_MAX: usize = 1024;

fn builtin_by_name(name: &str) -> Option<&'static Builtin> {
    BUILTINS
        .iter()
        .find(|b| b.name == name)
        .or((name == SMP_TEMPLATE.name).then_some(&SMP_TEMPLATE))
}

fn known_names() -> String {
    BUILTINS
        .iter()
        .map(|b| b.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The N of `smp:N`.
fn parse_smp_n(n: &str) -> Result<usize, String> {
    let bad = || format!("`{n}` is not a CPU count (smp:N, N = 1..={SMP_MAX})");
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    match n.parse::<usize>() {
        Ok(v) if (1..=SMP_MAX).contains(&v) => Ok(v),
        _ => Err(bad()),
    }
}

/// The generated document behind `smp:N`: the `smp` template with N CPUs.
fn smp_overlay(n: usize) -> String {
    let plural = if n == 1 { "" } else { "s" };
    format!(
        "extends = \"smp\"\nname = \"smp:{n}\"\n\
         description = \"{n} identical CPU{plural} (capacity 1024, one LLC, no SMT, no NUMA), HZ 250, preempt full, x86 server costs\"\n\
         [topology]\ncores_per_cluster = {n}\n"
    )
}

/// Maximum depth of `extends` chains.
const MAX_EXTENDS: usize = 8;

/// Parses `text` and, if it `extends` a built-in, merges it over that platform's tree.
fn load_tree(docs: &mut Docs, file: &str, text: &str, depth: usize) -> Result<Node, PlatformError> {
    let mut root = docs.parse(file, text)?;
    let Some(ext) = take_key(&mut root, "extends") else {
        return Ok(root);
    };
    let base_name = match &ext.kind {
        Kind::Str(s) => s.clone(),
        _ => return Err(docs.invalid(&ext, "extends", "expected a platform name string")),
    };
    let smp_n = base_name
        .strip_prefix("smp:")
        .map(|n| parse_smp_n(n).map_err(|m| docs.invalid(&ext, "extends", m)))
        .transpose()?;
    let base = builtin_by_name(&base_name);
    if base.is_none() && smp_n.is_none() {
        return Err(docs.invalid(
            &ext,
            "extends",
            format!(
                "`{base_name}` is not a built-in platform (one of: {}, smp:N)",
                known_names()
            ),
        ));
    }
    if depth >= MAX_EXTENDS {
        return Err(docs.invalid(&ext, "extends", "extends chain too deep (a cycle?)"));
    }
    for key in ["name", "description"] {
        if !has_key(&root, key) {
            return Err(docs.invalid(
                &ext,
                key,
                format!("required in a file that extends `{base_name}` (it would inherit the base's {key})"),
            ));
        }
    }
    let mut tree = match (base, smp_n) {
        (Some(b), _) => load_tree(docs, b.file, b.text, depth + 1)?,
        (None, Some(n)) => load_tree(docs, &format!("smp:{n}"), &smp_overlay(n), depth + 1)?,
        (None, None) => unreachable!("checked above"),
    };
    // A file that describes its topology in the other form (generator keys vs explicit id
    // arrays) replaces the base's description instead of mixing with it.
    if let (Some(child_t), Some(base_t)) = (
        table_entry(&root, "topology"),
        table_entry_mut(&mut tree, "topology"),
    ) {
        let drop: &[&str] = if ID_KEYS.iter().any(|k| has_key(child_t, k)) {
            GENERATOR_KEYS
        } else if GENERATOR_KEYS.iter().any(|k| has_key(child_t, k)) {
            ID_KEYS
        } else {
            &[]
        };
        if !drop.is_empty() {
            for k in drop.iter().chain(["cpus"].iter()) {
                take_key(base_t, k);
            }
        }
    }
    merge(&mut tree, root);
    Ok(tree)
}

fn table_entry<'a>(node: &'a Node, key: &str) -> Option<&'a Node> {
    match &node.kind {
        Kind::Table(v) => v.iter().find(|(k, _)| k == key).map(|(_, n)| n),
        _ => None,
    }
}

fn table_entry_mut<'a>(node: &'a mut Node, key: &str) -> Option<&'a mut Node> {
    match &mut node.kind {
        Kind::Table(v) => v.iter_mut().find(|(k, _)| k == key).map(|(_, n)| n),
        _ => None,
    }
}

/// Built-in platforms already decoded (a built-in is the same data every time; decoding its
/// TOML costs more than a short simulation). Bounded: `smp:N` has thousands of values.
static DECODED: std::sync::Mutex<Vec<(String, Platform)>> = std::sync::Mutex::new(Vec::new());
const DECODED_MAX: usize = 16;

fn decoded(
    key: &str,
    make: impl FnOnce() -> Result<Platform, PlatformError>,
) -> Result<Platform, PlatformError> {
    if let Some((_, p)) = DECODED.lock().unwrap().iter().find(|(k, _)| k == key) {
        return Ok(p.clone());
    }
    let p = make()?;
    let mut c = DECODED.lock().unwrap();
    if c.len() < DECODED_MAX {
        c.push((key.to_string(), p.clone()));
    }
    Ok(p)
}

impl Platform {
    /// A built-in platform by name (`rpi5`, `xeon-2s-64`, …; `smp:N` also works here).
    pub fn builtin(name: &str) -> Result<Platform, PlatformError> {
        if let Some(n) = name.strip_prefix("smp:") {
            return Platform::smp_str(name, n);
        }
        match BUILTINS.iter().find(|b| b.name == name) {
            Some(b) => decoded(b.name, || Platform::from_toml_str(b.text, b.file)),
            None => Err(PlatformError::Unknown {
                name: name.to_string(),
                known: known_names(),
            }),
        }
    }

    fn smp_str(spec: &str, n: &str) -> Result<Platform, PlatformError> {
        let n = parse_smp_n(n).map_err(|message| PlatformError::BadSpec {
            spec: spec.to_string(),
            message,
        })?;
        Platform::smp(n)
    }

    /// `smp:N`: N identical CPUs of capacity 1024 sharing one LLC, no SMT, no NUMA; HZ 250,
    /// preemption `full`, the x86 server cost column (`platforms/smp.toml`).
    pub fn smp(n: usize) -> Result<Platform, PlatformError> {
        if n == 0 || n > SMP_MAX {
            return Err(PlatformError::BadSpec {
                spec: format!("smp:{n}"),
                message: format!("N must be 1..={SMP_MAX}"),
            });
        }
        let name = format!("smp:{n}");
        decoded(&name, || Platform::from_toml_str(&smp_overlay(n), &name))
    }

    /// Parses a platform file; `file_name` is used in error messages and provenance.
    pub fn from_toml_str(text: &str, file_name: &str) -> Result<Platform, PlatformError> {
        let mut docs = Docs::default();
        let root = load_tree(&mut docs, file_name, text, 0)?;
        decode(&docs, &root, file_name)
    }

    /// Reads and parses a platform file.
    pub fn load(path: impl AsRef<Path>) -> Result<Platform, PlatformError> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let text =
            schedlab_engine::input::read_input_file(path).map_err(|source| PlatformError::Io {
                file: file.clone(),
                source,
            })?;
        Platform::from_toml_str(&text, &file)
    }

    /// What `--platform SPEC` accepts: a built-in name, `smp:N`, or a path to a `.toml` file.
    pub fn resolve(spec: &str) -> Result<Platform, PlatformError> {
        if let Some(n) = spec.strip_prefix("smp:") {
            return Platform::smp_str(spec, n);
        }
        if BUILTINS.iter().any(|b| b.name == spec) {
            return Platform::builtin(spec);
        }
        if spec.ends_with(".toml") || spec.contains('/') || Path::new(spec).is_file() {
            return Platform::load(spec);
        }
        Err(PlatformError::Unknown {
            name: spec.to_string(),
            known: known_names(),
        })
    }

    /// `(name, description)` of every built-in platform in a fixed order, then `smp:N`.
    pub fn list_builtin() -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = BUILTINS
            .iter()
            .map(|b| {
                let d = Platform::from_toml_str(b.text, b.file)
                    .map(|p| p.description)
                    .unwrap_or_else(|e| format!("(does not load: {e})"));
                (b.name.to_string(), d)
            })
            .collect();
        v.push((
            "smp:N".to_string(),
            "N identical CPUs (capacity 1024, one LLC, no SMT, no NUMA), HZ 250, preempt full, x86 server costs".to_string(),
        ));
        v
    }

    pub fn nr_cpus(&self) -> usize {
        self.cpus.len()
    }

    /// All CPUs (all are online in the simulator).
    pub fn all_cpus(&self) -> CpuMask {
        CpuMask::first_n(self.cpus.len())
    }

    pub fn capacity_orig(&self, cpu: usize) -> u32 {
        self.cpus[cpu].capacity_orig
    }

    /// `arch_scale_cpu_capacity(cpu)`: the CPU's capacity at its maximum frequency.
    pub fn arch_scale_cpu_capacity(&self, cpu: usize) -> u32 {
        self.cpus[cpu].capacity_orig
    }

    /// `arch_scale_freq_capacity(cpu)`: `freq_cur × 1024 / freq_max` (1024 at full speed),
    /// the frequency-invariance factor PELT uses (smp.md §7.3).
    pub fn arch_scale_freq_capacity(&self, cpu: usize) -> u32 {
        let c = &self.cpus[cpu];
        (u64::from(c.freq_cur_khz) * u64::from(SCHED_CAPACITY_SCALE) / u64::from(c.freq_max_khz))
            as u32
    }

    pub fn class_of(&self, cpu: usize) -> &CpuClass {
        &self.classes[self.cpus[cpu].class]
    }

    /// The resolved cost model of `cpu`.
    pub fn costs(&self, cpu: usize) -> &CostModel {
        &self.class_of(cpu).costs
    }

    pub fn idle_states(&self, cpu: usize) -> &[IdleState] {
        &self.class_of(cpu).idle_states
    }

    fn mask_where(&self, f: impl Fn(&CpuInfo) -> bool) -> CpuMask {
        self.cpus.iter().filter(|c| f(c)).map(|c| c.cpu).collect()
    }

    /// `cpu_smt_mask()`: the SMT siblings of `cpu`, itself included.
    pub fn cpu_smt_mask(&self, cpu: usize) -> CpuMask {
        let id = self.cpus[cpu].core_id;
        self.mask_where(|c| c.core_id == id)
    }

    /// CPUs of `cpu`'s cluster (`cluster_cpus`).
    pub fn cpu_cluster_mask(&self, cpu: usize) -> CpuMask {
        let id = self.cpus[cpu].cluster_id;
        self.mask_where(|c| c.cluster_id == id)
    }

    /// CPUs sharing `cpu`'s LLC (`llc_sibling` / `cpu_llc_shared_mask`).
    pub fn cpu_llc_mask(&self, cpu: usize) -> CpuMask {
        let id = self.cpus[cpu].llc_id;
        self.mask_where(|c| c.llc_id == id)
    }

    pub fn cpu_package_mask(&self, cpu: usize) -> CpuMask {
        let id = self.cpus[cpu].package_id;
        self.mask_where(|c| c.package_id == id)
    }

    /// `cpumask_of_node(node)`.
    pub fn cpumask_of_node(&self, node: u32) -> CpuMask {
        self.mask_where(|c| c.node == node)
    }

    pub fn cpu_to_node(&self, cpu: usize) -> u32 {
        self.cpus[cpu].node
    }

    pub fn nr_nodes(&self) -> usize {
        self.numa_distance.len()
    }

    /// `node_distance(a, b)`.
    pub fn node_distance(&self, a: u32, b: u32) -> u32 {
        self.numa_distance[a as usize][b as usize]
    }

    pub fn has_smt(&self) -> bool {
        (0..self.nr_cpus()).any(|c| self.cpu_smt_mask(c).weight() > 1)
    }

    /// CPUs removed from scheduling domains by `isolcpus=domain`.
    pub fn domain_isolated(&self) -> CpuMask {
        if self.isolation.domain {
            self.isolation.isolcpus.clone()
        } else {
            CpuMask::new()
        }
    }

    /// `housekeeping_cpumask(HK_TYPE_DOMAIN)`: the CPUs that get sched domains.
    pub fn housekeeping_domain(&self) -> CpuMask {
        self.all_cpus().andnot(&self.domain_isolated())
    }

    /// One jiffy.
    pub fn tick_period(&self) -> Nanos {
        Nanos(1_000_000_000 / u64::from(self.hz))
    }

    /// `max_load_balance_interval` = HZ × num_online_cpus / 10 jiffies (smp.md §4.2).
    pub fn max_load_balance_interval(&self) -> u64 {
        u64::from(self.hz) * self.nr_cpus() as u64 / 10
    }

    /// Builds the kernel's sched domains for this platform (see [`crate::topology`]).
    pub fn sched_domains(&self) -> SchedDomains {
        SchedDomains::build(self)
    }

    /// Provenance of a value by key path, if it was written in a file.
    pub fn provenance_of(&self, key: &str) -> Option<&Provenance> {
        self.provenance.get(key)
    }
}

// ---------------------------------------------------------------------------------------------
// Decoding and validation
// ---------------------------------------------------------------------------------------------

/// The `[topology]` section after reading: per-CPU ids.
struct Topo {
    core: Vec<u32>,
    cluster: Vec<u32>,
    llc: Vec<u32>,
    package: Vec<u32>,
    node: Vec<u32>,
}

const GENERATOR_KEYS: &[&str] = &[
    "packages",
    "nodes_per_package",
    "llcs_per_node",
    "clusters_per_llc",
    "cores_per_cluster",
    "threads_per_core",
    "thread_numbering",
];
const ID_KEYS: &[&str] = &["core", "cluster", "llc", "package", "node"];

fn read_topology(t: &Tbl) -> Result<Topo, PlatformError> {
    let generator = GENERATOR_KEYS.iter().any(|k| has_key(t.node, k));
    let explicit = ID_KEYS.iter().any(|k| has_key(t.node, k));
    if generator && explicit {
        let k = ID_KEYS
            .iter()
            .find(|k| has_key(t.node, k))
            .unwrap_or(&"core");
        return Err(t.err(
            k,
            "give either the generator keys (packages, …, cores_per_cluster) or explicit per-CPU id arrays, not both",
        ));
    }
    let max = MAX_CPUS as u64;
    let topo = if generator {
        let packages = t.opt_uint("packages", 1, max)?.unwrap_or(1);
        let nodes_pp = t.opt_uint("nodes_per_package", 1, max)?.unwrap_or(1);
        let llcs_pn = t.opt_uint("llcs_per_node", 1, max)?.unwrap_or(1);
        let cls_pl = t.opt_uint("clusters_per_llc", 1, max)?.unwrap_or(1);
        let cores_pc = t
            .opt_uint("cores_per_cluster", 1, max)?
            .ok_or_else(|| t.missing("cores_per_cluster"))?;
        let threads = t.opt_uint("threads_per_core", 1, 8)?.unwrap_or(1);
        let split = match t.opt_str("thread_numbering")?.unwrap_or("adjacent") {
            "adjacent" => false,
            "split" => true,
            other => {
                return Err(t.err(
                    "thread_numbering",
                    format!("`{other}`: expected \"adjacent\" (siblings numbered consecutively) or \"split\" (CPU n and n + cores are siblings)"),
                ))
            }
        };
        let ncores = packages
            .checked_mul(nodes_pp)
            .and_then(|v| v.checked_mul(llcs_pn))
            .and_then(|v| v.checked_mul(cls_pl))
            .and_then(|v| v.checked_mul(cores_pc))
            .filter(|&v| v * threads <= max)
            .ok_or_else(|| t.err("cores_per_cluster", format!("more than {MAX_CPUS} CPUs")))?;
        let ncpus = (ncores * threads) as usize;
        let mut topo = Topo {
            core: vec![0; ncpus],
            cluster: vec![0; ncpus],
            llc: vec![0; ncpus],
            package: vec![0; ncpus],
            node: vec![0; ncpus],
        };
        for k in 0..ncores {
            for th in 0..threads {
                let cpu = if split {
                    th * ncores + k
                } else {
                    k * threads + th
                } as usize;
                let cluster = k / cores_pc;
                let llc = cluster / cls_pl;
                let node = llc / llcs_pn;
                topo.core[cpu] = k as u32;
                topo.cluster[cpu] = cluster as u32;
                topo.llc[cpu] = llc as u32;
                topo.node[cpu] = node as u32;
                topo.package[cpu] = (node / nodes_pp) as u32;
            }
        }
        if let Some(n) = t.opt_uint("cpus", 1, max)? {
            if n as usize != ncpus {
                return Err(t.err(
                    "cpus",
                    format!("{n} does not match the generated topology ({ncpus} CPUs)"),
                ));
            }
        }
        topo
    } else {
        let n = t
            .opt_uint("cpus", 1, max)?
            .ok_or_else(|| t.missing("cpus"))? as usize;
        let ids = |key: &str| -> Result<Option<Vec<u32>>, PlatformError> {
            let Some(arr) = t.opt_array(key)? else {
                return Ok(None);
            };
            if arr.len() != n {
                return Err(t.err(
                    key,
                    format!("has {} entries, expected one per CPU ({n})", arr.len()),
                ));
            }
            arr.iter()
                .enumerate()
                .map(|(i, node)| {
                    t.ctx
                        .as_uint(
                            node,
                            &format!("{}[{i}]", t.key_path(key)),
                            0,
                            u32::MAX.into(),
                        )
                        .map(|v| v as u32)
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some)
        };
        let core = ids("core")?.unwrap_or_else(|| (0..n as u32).collect());
        let package = ids("package")?.unwrap_or_else(|| vec![0; n]);
        let node = ids("node")?.unwrap_or_else(|| vec![0; n]);
        let llc = ids("llc")?.unwrap_or_else(|| package.clone());
        let cluster = ids("cluster")?.unwrap_or_else(|| llc.clone());
        Topo {
            core,
            cluster,
            llc,
            package,
            node,
        }
    };
    // Nesting: SMT siblings share a cluster, a cluster lies in one LLC, an LLC in one package
    // and one node (sub-NUMA clustering is not modelled).
    let n = topo.core.len();
    let nest =
        |inner: &Vec<u32>, outer: &Vec<u32>, ik: &str, ok: &str| -> Result<(), PlatformError> {
            let mut seen: BTreeMap<u32, (usize, u32)> = BTreeMap::new();
            for cpu in 0..n {
                match seen.get(&inner[cpu]) {
                    Some(&(c0, o)) if o != outer[cpu] => {
                        return Err(t.err(
                            if generator { "cores_per_cluster" } else { ik },
                            format!(
                                "CPUs {c0} and {cpu} share {ik} {} but not {ok} ({o} vs {})",
                                inner[cpu], outer[cpu]
                            ),
                        ))
                    }
                    Some(_) => {}
                    None => {
                        seen.insert(inner[cpu], (cpu, outer[cpu]));
                    }
                }
            }
            Ok(())
        };
    nest(&topo.core, &topo.cluster, "core", "cluster")?;
    nest(&topo.cluster, &topo.llc, "cluster", "llc")?;
    nest(&topo.llc, &topo.package, "llc", "package")?;
    nest(&topo.llc, &topo.node, "llc", "node")?;
    Ok(topo)
}

fn read_numa(t: &Tbl, nodes: usize) -> Result<Vec<Vec<u32>>, PlatformError> {
    let key = "numa_distance";
    let Some(rows) = t.opt_array(key)? else {
        if nodes == 1 {
            return Ok(vec![vec![LOCAL_DISTANCE]]);
        }
        return Err(t.err(
            key,
            format!("required with {nodes} NUMA nodes (an {nodes}x{nodes} matrix)"),
        ));
    };
    if rows.len() != nodes {
        return Err(t.err(
            key,
            format!("has {} rows, expected {nodes} (one per node)", rows.len()),
        ));
    }
    let mut m = Vec::with_capacity(nodes);
    for (a, row) in rows.iter().enumerate() {
        let path = format!("{}[{a}]", t.key_path(key));
        let cols = t.ctx.as_array(row, &path)?;
        if cols.len() != nodes {
            return Err(t.ctx.err(row, &path, format!("expected {nodes} distances")));
        }
        let mut r = Vec::with_capacity(nodes);
        for (b, v) in cols.iter().enumerate() {
            let p = format!("{path}[{b}]");
            let d = t.ctx.as_uint(v, &p, 10, 254)? as u32;
            if (a == b) != (d == LOCAL_DISTANCE) {
                return Err(t.ctx.err(
                    v,
                    &p,
                    "the diagonal must be 10 (LOCAL_DISTANCE) and only the diagonal",
                ));
            }
            r.push(d);
        }
        m.push(r);
    }
    for (a, row) in m.iter().enumerate() {
        for (b, &d) in row.iter().enumerate() {
            if d != m[b][a] {
                return Err(t.err(
                    key,
                    format!(
                        "not symmetric: distance({a},{b}) = {d} but distance({b},{a}) = {}",
                        m[b][a]
                    ),
                ));
            }
        }
    }
    Ok(m)
}

fn read_cpulist(ctx: &Ctx, node: &Node, path: &str) -> Result<CpuMask, PlatformError> {
    let s = ctx.as_str(node, path)?;
    CpuMask::parse_cpulist(s).map_err(|e| ctx.err(node, path, e.to_string()))
}

/// `isolcpus=[nohz,][domain,][managed_irq,]cpulist` (kernel `housekeeping_isolcpus_setup`):
/// without any flag the list means `domain`.
fn parse_isolcpus(s: &str) -> Result<(CpuMask, bool, bool, bool), String> {
    let (mut nohz, mut domain, mut managed) = (false, false, false);
    let mut rest = s.trim();
    let mut any_flag = false;
    while rest.starts_with(|c: char| c.is_ascii_alphabetic()) {
        let (flag, tail) = rest.split_once(',').unwrap_or((rest, ""));
        match flag {
            "nohz" => nohz = true,
            "domain" => domain = true,
            "managed_irq" => managed = true,
            other => {
                return Err(format!(
                    "unknown isolcpus flag `{other}` (nohz, domain, managed_irq)"
                ))
            }
        }
        any_flag = true;
        rest = tail;
    }
    let cpus = CpuMask::parse_cpulist(rest).map_err(|e| e.to_string())?;
    if !any_flag && !cpus.is_empty() {
        domain = true;
    }
    Ok((cpus, nohz, domain, managed))
}

fn read_idle_state(ctx: &Ctx, node: &Node, path: &str) -> Result<IdleState, PlatformError> {
    let t = ctx.table(node, path)?;
    let name = t.req_str("name")?.to_string();
    let exit = t
        .opt_duration_ns("exit_latency_us")?
        .ok_or_else(|| t.missing("exit_latency_us"))?;
    let target = t
        .opt_duration_ns("target_residency_us")?
        .ok_or_else(|| t.missing("target_residency_us"))?;
    let entry = t.opt_duration_ns("entry_latency_us")?.unwrap_or(0);
    let polling = t.opt_bool("polling")?.unwrap_or(false);
    ctx.record(node, path);
    t.finish()?;
    Ok(IdleState {
        name,
        exit_latency_ns: Nanos(exit),
        target_residency_ns: Nanos(target),
        entry_latency_ns: Nanos(entry),
        polling,
    })
}

/// The most one cost value may be (1 s).
pub const MAX_COST_NS: u64 = 1_000_000_000;

/// The most one `[programs.NAME]` duration may be: an hour of work (the largest default is the
/// kernel build's 60 s vmlinux link). The models multiply these values by counts of tokens,
/// chunks and units; the cap keeps those products in `u64`.
pub const MAX_PROGRAM_COST_NS: u64 = 3_600_000_000_000;

/// Reads cost values of a `[costs]`-like table into `c`; returns the fields set, in order.
/// Bare numbers are µs; `"n/a"` marks an optional field as not applicable.
fn read_costs(
    t: &Tbl,
    c: &mut CostModel,
    skip: &[&str],
) -> Result<Vec<&'static str>, PlatformError> {
    let mut set = Vec::new();
    let keys: Vec<&str> = t.keys().filter(|k| !skip.contains(k)).collect();
    for key in keys {
        let Some(field) = COST_FIELDS.iter().find(|f| f.name == key) else {
            continue; // reported as unknown by finish()
        };
        let node = t.get(key).expect("key listed");
        let path = t.key_path(key);
        let v = match &node.kind {
            Kind::Str(s) if s.trim() == "n/a" => {
                if field.required {
                    return Err(t.ctx.err(
                        node,
                        &path,
                        "is required on every platform and cannot be n/a",
                    ));
                }
                t.ctx.record(node, &path);
                None
            }
            _ => {
                let ns = t.ctx.as_duration_ns(node, &path)?;
                // One kernel operation costing more than a second is a typo, and a cost near
                // 2^64 ns would overflow the clock arithmetic it is added to.
                if ns > MAX_COST_NS {
                    return Err(t.ctx.err(
                        node,
                        &path,
                        format!("{ns} ns is more than the 1 s one kernel operation may cost"),
                    ));
                }
                Some(Nanos(ns))
            }
        };
        c.set(field.name, v);
        set.push(field.name);
    }
    Ok(set)
}

fn decode(docs: &Docs, root: &Node, file: &str) -> Result<Platform, PlatformError> {
    let ctx = Ctx::new(docs);
    let top = ctx.table(root, "")?;
    let name = top.req_str("name")?.to_string();
    let description = top.req_str("description")?.to_string();
    let mut notes = Vec::new();
    if let Some(arr) = top.opt_array("notes")? {
        for (i, n) in arr.iter().enumerate() {
            notes.push(ctx.as_str(n, &format!("notes[{i}]"))?.to_string());
        }
    }

    // [kernel]
    let kt = top
        .opt_table("kernel")?
        .ok_or_else(|| top.missing("kernel"))?;
    let hz = kt
        .opt_uint("hz", 0, 100_000)?
        .ok_or_else(|| kt.missing("hz"))? as u32;
    if ![100, 250, 300, 1000].contains(&hz) {
        return Err(kt.err(
            "hz",
            "must be one of the CONFIG_HZ choices 100, 250, 300, 1000",
        ));
    }
    let preempt_s = kt.req_str("preempt")?;
    let preempt = PreemptModel::parse(preempt_s).ok_or_else(|| {
        kt.err(
            "preempt",
            format!("`{preempt_s}`: expected none, voluntary, full, lazy or rt"),
        )
    })?;
    let preempt_dynamic = kt.opt_bool("preempt_dynamic")?.unwrap_or(false);
    let rt_group_sched = kt.opt_bool("rt_group_sched")?.unwrap_or(false);
    let sched_clock_hz = kt
        .opt_uint("sched_clock_hz", 1_000, 1_000_000_000)?
        .unwrap_or(1_000_000_000);
    let mut isolation = Isolation::default();
    if let Some(s) = kt.opt_str("isolcpus")? {
        let (cpus, nohz, domain, managed) = parse_isolcpus(s).map_err(|m| kt.err("isolcpus", m))?;
        isolation.isolcpus = cpus;
        isolation.nohz = nohz;
        isolation.domain = domain;
        isolation.managed_irq = managed;
    }
    if let Some(n) = kt.get("nohz_full") {
        isolation.nohz_full = read_cpulist(&ctx, n, "kernel.nohz_full")?;
    }
    if let Some(n) = kt.get("rcu_nocbs") {
        isolation.rcu_nocbs = read_cpulist(&ctx, n, "kernel.rcu_nocbs")?;
    }
    let relax_domain_level = kt.opt_uint("relax_domain_level", 0, 16)?.map(|v| v as u32);
    kt.finish()?;

    // [topology]
    let tt = top
        .opt_table("topology")?
        .ok_or_else(|| top.missing("topology"))?;
    let topo = read_topology(&tt)?;
    let ncpus = topo.core.len();
    let nodes: Vec<u32> = {
        let mut v = topo.node.clone();
        v.sort_unstable();
        v.dedup();
        v
    };
    if nodes.iter().enumerate().any(|(i, &n)| i as u32 != n) {
        return Err(tt.err(
            if has_key(tt.node, "node") {
                "node"
            } else {
                "nodes_per_package"
            },
            format!(
                "NUMA nodes must be numbered 0..{} without gaps",
                nodes.len()
            ),
        ));
    }
    let numa_distance = read_numa(&tt, nodes.len())?;
    let llc_level = match tt.opt_str("llc_level")?.unwrap_or("MC") {
        "MC" => LlcLevel::Mc,
        "CLS" => LlcLevel::Cls,
        other => {
            return Err(tt.err(
                "llc_level",
                format!("`{other}`: expected \"MC\" or \"CLS\""),
            ))
        }
    };
    if llc_level == LlcLevel::Cls {
        // Clusters nest in LLCs (checked above); the LLC is the cluster iff no LLC holds two.
        let mut first_cluster: BTreeMap<u32, u32> = BTreeMap::new();
        for cpu in 0..ncpus {
            let c = *first_cluster
                .entry(topo.llc[cpu])
                .or_insert(topo.cluster[cpu]);
            if c != topo.cluster[cpu] {
                return Err(tt.err(
                    "llc_level",
                    format!(
                        "\"CLS\" needs each LLC to be one cluster, but LLC {} holds clusters {c} and {}",
                        topo.llc[cpu], topo.cluster[cpu]
                    ),
                ));
            }
        }
    }
    let smt_throughput_ppm = tt.opt_decimal("smt_throughput", 6)?.unwrap_or(1_000_000);
    if smt_throughput_ppm == 0 || smt_throughput_ppm > 1_000_000 {
        return Err(tt.err("smt_throughput", "must be in (0, 1]"));
    }
    tt.finish()?;
    let all = CpuMask::first_n(ncpus);

    // Isolation sanity (needs the CPU count).
    for (key, m) in [
        ("isolcpus", &isolation.isolcpus),
        ("nohz_full", &isolation.nohz_full),
        ("rcu_nocbs", &isolation.rcu_nocbs),
    ] {
        if !m.is_subset_of(&all) {
            let kt = top.opt_table("kernel")?.expect("read above");
            return Err(kt.err(key, format!("CPUs {} do not exist", m.andnot(&all))));
        }
    }
    if isolation.domain && all.is_subset_of(&isolation.isolcpus) {
        let kt = top.opt_table("kernel")?.expect("read above");
        return Err(kt.err(
            "isolcpus",
            "isolates every CPU; at least one housekeeping CPU is needed",
        ));
    }

    // [costs] — the reference column.
    let ct = top
        .opt_table("costs")?
        .ok_or_else(|| top.missing("costs"))?;
    let mut costs = CostModel::zero();
    costs.jitter_sigma_ppm = 100_000;
    let given = read_costs(
        &ct,
        &mut costs,
        &["reference_capacity", "jitter_sigma", "calibration"],
    )?;
    let missing: Vec<&str> = COST_FIELDS
        .iter()
        .filter(|f| f.required && !given.contains(&f.name))
        .map(|f| f.name)
        .collect();
    if !missing.is_empty() {
        return Err(ctx.err(
            ct.node,
            "costs",
            format!("missing required cost values: {}", missing.join(", ")),
        ));
    }
    let reference_capacity = ct
        .opt_uint("reference_capacity", 1, u64::from(SCHED_CAPACITY_SCALE))?
        .unwrap_or(u64::from(SCHED_CAPACITY_SCALE)) as u32;
    if let Some(j) = ct.opt_decimal("jitter_sigma", 6)? {
        // σ of the log-normal cost factor. At σ = 1 a draw three standard deviations out
        // multiplies a cost by e^3 ≈ 20; larger values stop describing a machine and
        // overflow the factor table's fixed-point exponent (σ = 1000 gives e^3000).
        if j > 1_000_000 {
            return Err(ct.err("jitter_sigma", "must be between 0 and 1"));
        }
        costs.jitter_sigma_ppm = j as u32;
    }
    // `calibration`: one factor on every CPU-work cost of the column (not on latencies), fitted
    // to a single baseline measurement and recorded with it in the file.
    if let Some(ppm) = ct.opt_decimal("calibration", 6)? {
        if !(100_000..=10_000_000).contains(&ppm) {
            return Err(ct.err("calibration", "must be between 0.1 and 10"));
        }
        costs = costs.map(|name, v| {
            if LATENCY_FIELDS.contains(&name) {
                v
            } else {
                Nanos(((v.0 as u128 * ppm as u128 + 500_000) / 1_000_000) as u64)
            }
        });
    }
    ct.finish()?;

    // [[cpu_class]]
    let class_nodes = top
        .opt_array("cpu_class")?
        .ok_or_else(|| top.missing("cpu_class"))?;
    if class_nodes.is_empty() {
        return Err(top.err("cpu_class", "at least one CPU class is needed"));
    }
    struct RawClass {
        name: String,
        cpus: CpuMask,
        capacity: Option<u32>,
        dmips: Option<u32>,
        freq_max_khz: u32,
        freq_cur_khz: u32,
        idle_states: Vec<IdleState>,
        overrides: Vec<&'static str>,
        override_costs: CostModel,
        path: String,
        node: Node,
        /// The `capacity` value (or the class) for errors about the capacity.
        cap_node: Node,
    }
    let mut raw = Vec::new();
    let mut owner: Vec<Option<usize>> = vec![None; ncpus];
    for (i, cn) in class_nodes.iter().enumerate() {
        let path = format!("cpu_class[{i}]");
        let t = ctx.table(cn, &path)?;
        let cname = t.req_str("name")?.to_string();
        let cpus = match t.get("cpus") {
            Some(n) => read_cpulist(&ctx, n, &t.key_path("cpus"))?,
            None if class_nodes.len() == 1 => all.clone(),
            None => return Err(t.missing("cpus")),
        };
        if !cpus.is_subset_of(&all) {
            return Err(t.err(
                "cpus",
                format!("CPUs {} do not exist ({ncpus} CPUs)", cpus.andnot(&all)),
            ));
        }
        for c in &cpus {
            if let Some(j) = owner[c] {
                return Err(t.err("cpus", format!("CPU {c} is also in cpu_class[{j}]")));
            }
            owner[c] = Some(i);
        }
        let capacity = t
            .opt_uint("capacity", 1, u64::from(SCHED_CAPACITY_SCALE))?
            .map(|v| v as u32);
        let dmips = t
            .opt_uint("capacity_dmips_mhz", 1, 1 << 20)?
            .map(|v| v as u32);
        if capacity.is_none() && dmips.is_none() {
            return Err(t.missing("capacity"));
        }
        let khz = |key: &str| -> Result<Option<u32>, PlatformError> {
            match t.opt_decimal(key, 3)? {
                None => Ok(None),
                Some(0) => Err(t.err(key, "must be positive")),
                Some(v) => u32::try_from(v)
                    .map(Some)
                    .map_err(|_| t.err(key, "too large")),
            }
        };
        let freq_max_khz = khz("freq_max_mhz")?.ok_or_else(|| t.missing("freq_max_mhz"))?;
        let freq_cur_khz = khz("freq_cur_mhz")?.unwrap_or(freq_max_khz);
        if freq_cur_khz > freq_max_khz {
            return Err(t.err("freq_cur_mhz", "must not exceed freq_max_mhz"));
        }
        let mut idle_states = Vec::new();
        if let Some(arr) = t.opt_array("idle_states")? {
            for (j, n) in arr.iter().enumerate() {
                let p = format!("{path}.idle_states[{j}]");
                let s = read_idle_state(&ctx, n, &p)?;
                if s.polling && j != 0 {
                    return Err(ctx.err(n, &p, "only state 0 may be a polling state"));
                }
                if let Some(prev) = idle_states.last() {
                    let prev: &IdleState = prev;
                    if s.target_residency_ns < prev.target_residency_ns {
                        return Err(ctx.err(
                            n,
                            &p,
                            "states must be listed shallowest first (target residency ascending)",
                        ));
                    }
                }
                idle_states.push(s);
            }
        }
        let mut override_costs = CostModel::zero();
        let overrides = match t.opt_table("costs")? {
            Some(ot) => {
                if has_key(ot.node, "reference_capacity") || has_key(ot.node, "jitter_sigma") {
                    return Err(ot.err(
                        "reference_capacity",
                        "reference_capacity and jitter_sigma belong in [costs], not in a class",
                    ));
                }
                let v = read_costs(&ot, &mut override_costs, &[])?;
                ot.finish()?;
                v
            }
            None => Vec::new(),
        };
        let cap_node = t.get("capacity").unwrap_or(cn).clone();
        t.finish()?;
        raw.push(RawClass {
            name: cname,
            cpus,
            capacity,
            dmips,
            freq_max_khz,
            freq_cur_khz,
            idle_states,
            overrides,
            override_costs,
            path,
            node: cn.clone(),
            cap_node,
        });
    }
    let orphans: CpuMask = (0..ncpus).filter(|&c| owner[c].is_none()).collect();
    if !orphans.is_empty() {
        return Err(top.err(
            "cpu_class",
            format!("CPUs {orphans} belong to no cpu_class"),
        ));
    }

    // Capacities: from capacity-dmips-mhz × f_max normalised to 1024 (arch_topology.c
    // topology_normalize_cpu_scale(), v6.8+ with capacity_freq_ref in kHz), checked against
    // any capacity written beside it.
    let with_dmips = raw.iter().filter(|r| r.dmips.is_some()).count();
    if with_dmips != 0 && with_dmips != raw.len() {
        let r = raw
            .iter()
            .find(|r| r.dmips.is_none())
            .expect("some lack dmips");
        return Err(ctx.err(
            &r.node,
            &format!("{}.capacity_dmips_mhz", r.path),
            "give capacity_dmips_mhz for every class or for none",
        ));
    }
    if with_dmips != 0 {
        let rawcap = |r: &RawClass| u128::from(r.dmips.unwrap_or(0)) * u128::from(r.freq_max_khz);
        let scale = raw.iter().map(rawcap).max().unwrap_or(1).max(1);
        for r in &mut raw {
            let computed = (rawcap(r) * u128::from(SCHED_CAPACITY_SCALE) / scale) as u32;
            match r.capacity {
                Some(c) if c != computed => {
                    return Err(ctx.err(
                        &r.cap_node,
                        &format!("{}.capacity", r.path),
                        format!(
                            "{c} disagrees with capacity_dmips_mhz × freq_max normalised to 1024 = {computed}"
                        ),
                    ))
                }
                _ => r.capacity = Some(computed.max(1)),
            }
        }
    }
    let max_cap = raw.iter().filter_map(|r| r.capacity).max().unwrap_or(0);
    if max_cap != SCHED_CAPACITY_SCALE {
        return Err(top.err(
            "cpu_class",
            format!("the largest capacity is {max_cap}; it must be 1024 (SCHED_CAPACITY_SCALE)"),
        ));
    }

    // Resolve costs per class (cost.rs module docs).
    let mut classes = Vec::new();
    for r in raw {
        let cap = r.capacity.expect("set above");
        let num = u64::from(reference_capacity) * u64::from(r.freq_max_khz);
        let den = u64::from(cap) * u64::from(r.freq_cur_khz);
        let mut resolved = costs.map(|name, v| {
            if LATENCY_FIELDS.contains(&name) {
                v
            } else {
                scale_ns(v, num, den)
            }
        });
        for name in &r.overrides {
            let v = r.override_costs.get(name).expect("known field");
            let v = v.map(|v| {
                if LATENCY_FIELDS.contains(name) {
                    v
                } else {
                    scale_ns(v, u64::from(r.freq_max_khz), u64::from(r.freq_cur_khz))
                }
            });
            resolved.set(name, v);
        }
        classes.push(CpuClass {
            name: r.name,
            cpus: r.cpus,
            capacity_orig: cap,
            capacity_dmips_mhz: r.dmips,
            freq_max_khz: r.freq_max_khz,
            freq_cur_khz: r.freq_cur_khz,
            idle_states: r.idle_states,
            cost_overrides: r.overrides,
            costs: resolved,
        });
    }

    let cpus: Vec<CpuInfo> = (0..ncpus)
        .map(|c| {
            let k = owner[c].expect("checked");
            CpuInfo {
                cpu: c,
                class: k,
                core_id: topo.core[c],
                cluster_id: topo.cluster[c],
                llc_id: topo.llc[c],
                package_id: topo.package[c],
                node: topo.node[c],
                capacity_orig: classes[k].capacity_orig,
                freq_max_khz: classes[k].freq_max_khz,
                freq_cur_khz: classes[k].freq_cur_khz,
            }
        })
        .collect();
    // "CPU capacity asymmetry not supported on SMT" (topology.c sd_init WARN).
    let mut core_cap: BTreeMap<u32, (usize, u32)> = BTreeMap::new();
    for c in &cpus {
        let (first, cap) = *core_cap
            .entry(c.core_id)
            .or_insert((c.cpu, c.capacity_orig));
        if cap != c.capacity_orig {
            return Err(top.err(
                "cpu_class",
                format!(
                    "SMT siblings {first} and {} have different capacities (not supported by the kernel)",
                    c.cpu
                ),
            ));
        }
    }

    // [[cluster_idle_state]]
    let mut cluster_idle_states = Vec::new();
    if let Some(arr) = top.opt_array("cluster_idle_state")? {
        for (i, n) in arr.iter().enumerate() {
            let path = format!("cluster_idle_state[{i}]");
            let t = ctx.table(n, &path)?;
            let cname = t.req_str("name")?.to_string();
            let cpus = match t.get("cpus") {
                Some(c) => read_cpulist(&ctx, c, &t.key_path("cpus"))?,
                None => return Err(t.missing("cpus")),
            };
            if !cpus.is_subset_of(&all) {
                return Err(t.err("cpus", format!("CPUs {} do not exist", cpus.andnot(&all))));
            }
            let req = |k: &str| -> Result<Nanos, PlatformError> {
                Ok(Nanos(t.opt_duration_ns(k)?.ok_or_else(|| t.missing(k))?))
            };
            let entry = req("entry_latency_us")?;
            let exit = req("exit_latency_us")?;
            let target = req("target_residency_us")?;
            t.finish()?;
            cluster_idle_states.push(ClusterIdleState {
                name: cname,
                cpus,
                entry_latency_ns: entry,
                exit_latency_ns: exit,
                target_residency_ns: target,
            });
        }
    }

    // [cpufreq]
    let mut governor = Governor::Performance;
    let mut freq_domains: Vec<CpuMask> = classes.iter().map(|c| c.cpus.clone()).collect();
    if let Some(ft) = top.opt_table("cpufreq")? {
        if let Some(g) = ft.opt_str("governor")? {
            governor = match g {
                "none" => Governor::None,
                "performance" => Governor::Performance,
                "ondemand" => Governor::Ondemand,
                "schedutil" => Governor::Schedutil,
                other => {
                    return Err(ft.err(
                        "governor",
                        format!("`{other}`: expected none, performance, ondemand or schedutil"),
                    ))
                }
            };
        }
        if let Some(arr) = ft.opt_array("domains")? {
            let mut doms = Vec::new();
            let mut covered = CpuMask::new();
            for (i, n) in arr.iter().enumerate() {
                let p = format!("cpufreq.domains[{i}]");
                let m = read_cpulist(&ctx, n, &p)?;
                if m.is_empty() || !m.is_subset_of(&all) || m.intersects(&covered) {
                    return Err(ctx.err(
                        n,
                        &p,
                        "each domain must be a non-empty set of existing CPUs, disjoint from the others",
                    ));
                }
                covered = covered.or(&m);
                doms.push(m);
            }
            if covered != all {
                return Err(ft.err(
                    "domains",
                    format!("CPUs {} are in no frequency domain", all.andnot(&covered)),
                ));
            }
            freq_domains = doms;
        }
        ft.finish()?;
    }

    // [storage]
    let storage = match top.opt_table("storage")? {
        None => StorageDevice::from_table("nvme").expect("table row"),
        Some(st) => {
            let dev = st.req_str("device")?;
            let mut s = StorageDevice::from_table(dev).ok_or_else(|| {
                st.err(
                    "device",
                    format!(
                        "`{dev}` is not a row of Table 1.11-C ({})",
                        STORAGE_DEVICES
                            .iter()
                            .map(|r| r.0)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            })?;
            for (k, f) in [
                ("read_4k", &mut s.read_4k),
                ("write_4k", &mut s.write_4k),
                ("flush", &mut s.flush),
                ("flush_max", &mut s.flush_max),
            ] {
                if let Some(v) = st.opt_duration_ns(k)? {
                    *f = Nanos(v);
                }
            }
            if s.flush_max < s.flush {
                s.flush_max = s.flush;
            }
            st.finish()?;
            s
        }
    };

    // [programs.NAME]
    let mut programs = ProgramCosts::default();
    if let Some(pt) = top.opt_table("programs")? {
        let names: Vec<&str> = pt.keys().collect();
        for prog in names {
            if !PROGRAM_COST_FIELDS.iter().any(|f| f.program == prog) {
                let mut known: Vec<&str> = PROGRAM_COST_FIELDS.iter().map(|f| f.program).collect();
                known.dedup();
                return Err(pt.err(
                    prog,
                    format!(
                        "no costs are defined for this program (known: {})",
                        known.join(", ")
                    ),
                ));
            }
            let t = pt.opt_table(prog)?.expect("key listed");
            let keys: Vec<&str> = t.keys().collect();
            for key in keys {
                let Some(f) = PROGRAM_COST_FIELDS
                    .iter()
                    .find(|f| f.program == prog && f.name == key)
                else {
                    continue; // reported as unknown by finish()
                };
                let v = match f.kind {
                    ProgramCostKind::Duration => {
                        let v = t.opt_duration_ns(key)?.expect("key listed");
                        // Work of one step of a program beyond an hour is a typo, and the
                        // models multiply these values by token, chunk and unit counts.
                        if v > MAX_PROGRAM_COST_NS {
                            return Err(t.err(
                                key,
                                format!(
                                    "{v} ns is more than the 3600 s (one hour) of work one \
                                     program cost may be"
                                ),
                            ));
                        }
                        v
                    }
                    ProgramCostKind::Switch => u64::from(t.opt_bool(key)?.expect("key listed")),
                };
                programs.set(f, Nanos(v));
            }
            t.finish()?;
        }
        pt.finish()?;
    }

    top.finish()?;
    let provenance = ctx.prov.into_inner();
    Ok(Platform {
        name,
        description,
        source: file.to_string(),
        notes,
        cpus,
        classes,
        numa_distance,
        llc_level,
        smt_throughput_ppm: smt_throughput_ppm as u32,
        hz,
        preempt,
        preempt_dynamic,
        rt_group_sched,
        sched_clock_hz,
        isolation,
        relax_domain_level,
        governor,
        freq_domains,
        cluster_idle_states,
        costs,
        reference_capacity,
        storage,
        programs,
        provenance,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(list: &str) -> CpuMask {
        CpuMask::parse_cpulist(list).unwrap()
    }

    const PREFIX: &str = "extends = \"smp:4\"\nname = \"t\"\ndescription = \"t\"\n";

    /// Loads `PREFIX + body` as `t.toml` (lines of `body` start at line 4).
    fn load(body: &str) -> Result<Platform, PlatformError> {
        Platform::from_toml_str(&format!("{PREFIX}{body}"), "t.toml")
    }

    fn err(body: &str) -> String {
        load(body).unwrap_err().to_string()
    }

    #[test]
    fn every_builtin_loads_and_shows() {
        let list = Platform::list_builtin();
        let names: Vec<&str> = list.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            vec![
                "rpi5",
                "rpi5-2.4",
                "rpi4-rt",
                "xeon-2s-64",
                "altra-80",
                "altra-80-llc80",
                "rb5",
                "x86-2s-80",
                "host",
                "smp:N"
            ]
        );
        for (name, desc) in &list {
            assert!(!desc.starts_with("(does not load"), "{name}: {desc}");
            let spec = if name == "smp:N" {
                "smp:3"
            } else {
                name.as_str()
            };
            let p = Platform::resolve(spec).unwrap();
            assert_eq!(p.name, spec);
            let s = p.show();
            assert!(s.contains("Sched domains"), "{name}");
            assert!(s.contains("c_ctxsw_process"), "{name}");
            assert!(s.contains(&format!("platform {spec} — ")), "{name}");
            // Every required cost is present and every class has at least one idle state.
            for k in &p.classes {
                assert!(!k.idle_states.is_empty(), "{name}/{}", k.name);
            }
        }
        // The template alone is not a platform.
        assert!(matches!(
            Platform::builtin("smp"),
            Err(PlatformError::Unknown { .. })
        ));
    }

    #[test]
    fn rpi5_values() {
        // workloads.md §11.1 and Table 1.11-A/-B column A76 @2.8.
        let p = Platform::builtin("rpi5").unwrap();
        assert_eq!(p.nr_cpus(), 4);
        assert_eq!(p.hz, 250);
        assert_eq!(p.tick_period(), Nanos::from_ms(4));
        assert_eq!(p.preempt, PreemptModel::Full);
        assert!((0..4).all(|c| p.capacity_orig(c) == 1024));
        assert_eq!(p.cpus[2].freq_max_khz, 2_800_000);
        assert_eq!(p.cpus[2].freq_cur_khz, 2_800_000);
        let c = p.costs(0);
        // The column's values times the file's calibration 1.04, rounded half up; latencies
        // (lat_ipi, cache lines) are not CPU work and keep their value.
        assert_eq!(c.c_ttwu, Nanos(312)); // 0.30 µs × 1.04 = 312 ns
        assert_eq!(c.c_ctxsw_process, Nanos(1_113)); // 1.07 µs (1.37 − c_ttwu [S1]) × 1.04 = 1112.8
        assert_eq!(c.c_ctxsw_thread, Nanos(1_040)); // 1.0 µs × 1.04
        assert_eq!(c.c_pipe_write, Nanos(364)); // 0.35 µs × 1.04 = 364
        assert_eq!(c.c_pipe_read, Nanos(281)); // 0.27 µs × 1.04 = 280.8
        assert_eq!(c.c_fork, Nanos(93_600)); // 90 µs × 1.04
        assert_eq!(c.lat_ipi, Nanos::from_us(1)); // latency: not calibrated
        assert_eq!(c.c_migrate_cold, None); // "—" in Table 1.11-A
        assert_eq!(c.c_line_llc, Some(Nanos(40))); // smp.md §8.2, latency
        assert_eq!(p.sched_clock_hz, 54_000_000); // 54 MHz arch timer
        assert_eq!(c.jitter_sigma_ppm, 100_000); // §0.2 default 0.10
        assert_eq!(p.idle_states(1)[0].name, "WFI");
        assert_eq!(p.idle_states(1)[0].exit_latency_ns, Nanos::from_us(1));
        assert_eq!(p.max_load_balance_interval(), 100); // 250 × 4 / 10 jiffies
        assert_eq!(p.arch_scale_freq_capacity(3), 1024); // fixed at f_max
                                                         // Determinism: the same file gives the same platform.
        assert_eq!(p, Platform::builtin("rpi5").unwrap());
        let prov = p.provenance_of("costs.c_ctxsw_process").unwrap();
        assert_eq!(prov.comment, "derived: 1.37 − c_ttwu [S1]");
        assert!(prov.at.starts_with("platforms/rpi5.toml:"));
    }

    #[test]
    fn rpi5_stock_variant() {
        // §11.1 stock 2.4 GHz with the A76 @2.4 column of Table 1.11-A.
        let p = Platform::builtin("rpi5-2.4").unwrap();
        assert_eq!(p.cpus[0].freq_max_khz, 2_400_000);
        assert_eq!(p.cpus[0].freq_cur_khz, 2_400_000);
        assert_eq!(p.capacity_orig(0), 1024);
        let c = p.costs(3);
        // The 2.4 GHz column, with the calibration inherited from rpi5 (× 1.04, half up).
        assert_eq!(c.c_ttwu, Nanos(364)); // 350 × 1.04 = 364
        assert_eq!(c.c_ctxsw_process, Nanos(1_300)); // 1250 × 1.04 = 1300
        assert_eq!(c.c_clock, Nanos(36)); // 35 × 1.04 = 36.4
        assert_eq!(c.c_pipe_write, Nanos(424)); // 0.35 × 2.8/2.4 = 0.408 µs; × 1.04 = 424.3
        assert_eq!(p.preempt, PreemptModel::Full); // inherited from rpi5
                                                   // Inherited values keep their origin.
        assert!(p
            .provenance_of("kernel.hz")
            .unwrap()
            .at
            .starts_with("platforms/rpi5.toml:"));
    }

    #[test]
    fn calibration_and_sched_clock() {
        // calibration 0.5 halves CPU-work costs (half up) and leaves latencies alone; a file
        // that extends rpi5 and sets it replaces rpi5's 1.04 (the column itself is unchanged).
        let text = "extends = \"rpi5\"\nname = \"h\"\ndescription = \"d\"\n\
                    [kernel]\nsched_clock_hz = 19200000\n[costs]\ncalibration = 0.5\n";
        let p = Platform::from_toml_str(text, "u.toml").unwrap();
        let c = p.costs(0);
        assert_eq!(c.c_ttwu, Nanos(150)); // 300 × 0.5
        assert_eq!(c.c_clock, Nanos(15)); // 30 × 0.5
        assert_eq!(c.lat_ipi, Nanos::from_us(1));
        assert_eq!(p.sched_clock_hz, 19_200_000);
        // default: 1 ns resolution
        assert_eq!(Platform::smp(2).unwrap().sched_clock_hz, 1_000_000_000);
        let bad =
            "extends = \"rpi5\"\nname = \"h\"\ndescription = \"d\"\n[costs]\ncalibration = 20\n";
        let e = Platform::from_toml_str(bad, "u.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("u.toml:5") && e.contains("costs.calibration"),
            "{e}"
        );
        let bad =
            "extends = \"rpi5\"\nname = \"h\"\ndescription = \"d\"\n[kernel]\nsched_clock_hz = 5\n";
        let e = Platform::from_toml_str(bad, "u.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("kernel.sched_clock_hz"), "{e}");
    }

    #[test]
    fn frequency_override_scales_costs() {
        // workloads.md §0.2: cost × f_max / f_cur; latencies are not CPU work.
        let text = "extends = \"rpi5\"\nname = \"rpi5-1.4\"\ndescription = \"d\"\n\
                    [[cpu_class]]\nname = \"A76\"\ncapacity = 1024\nfreq_max_mhz = 2800\nfreq_cur_mhz = 1400\n";
        let p = Platform::from_toml_str(text, "u.toml").unwrap();
        let c = p.costs(0);
        assert_eq!(c.c_ttwu, Nanos(624)); // 312 (calibrated) × 2800/1400
        assert_eq!(p.arch_scale_freq_capacity(0), 512); // 1400 × 1024 / 2800
        assert_eq!(p.arch_scale_cpu_capacity(0), 1024);
        assert_eq!(c.c_fork, Nanos(187_200)); // 93 600 × 2
        assert_eq!(c.lat_ipi, Nanos::from_us(1)); // unscaled
        assert!(p.idle_states(0).is_empty()); // the replaced class has no idle states
    }

    #[test]
    fn rpi4_rt_isolation() {
        // rt-dl.md §5.1: isolcpus=nohz,domain,managed_irq,3 nohz_full=3, PREEMPT_RT.
        let p = Platform::builtin("rpi4-rt").unwrap();
        assert_eq!(p.preempt, PreemptModel::Rt);
        let iso = &p.isolation;
        assert_eq!(iso.isolcpus, m("3"));
        assert!(iso.nohz && iso.domain && iso.managed_irq);
        assert_eq!(iso.nohz_full, m("3"));
        assert_eq!(iso.rcu_nocbs, m("3"));
        assert_eq!(p.housekeeping_domain(), m("0-2"));
        // Table 1.11-A's A72 column scaled by the seed-001 calibration factor 0.6696:
        // 1.05 µs x 0.6696 = 0.70308 -> 0.703 µs; 3.8 µs x 0.6696 = 2.54448 -> 2.544 µs
        assert_eq!(p.costs(0).c_ttwu, Nanos(703));
        assert_eq!(p.costs(0).c_ctxsw_process, Nanos(2_544));
        assert_eq!(p.storage.device, "ram");
        assert_eq!(p.cpus[0].freq_max_khz, 1_500_000);
    }

    #[test]
    fn isolcpus_syntax() {
        // Kernel housekeeping_isolcpus_setup(): no flag means "domain".
        assert_eq!(parse_isolcpus("2-3"), Ok((m("2-3"), false, true, false)));
        assert_eq!(parse_isolcpus("nohz,1"), Ok((m("1"), true, false, false)));
        assert!(parse_isolcpus("bogus,1").is_err());
        assert_eq!(
            parse_isolcpus(""),
            Ok((CpuMask::new(), false, false, false))
        );
    }

    #[test]
    fn xeon_topology_ids() {
        // workloads.md §11.3: CPUs 0–15 socket 0 first threads, 16–31 socket 1, 32–47 their
        // siblings on socket 0, 48–63 on socket 1; distance 10/21; SMT factor 0.60.
        let p = Platform::builtin("xeon-2s-64").unwrap();
        assert_eq!(p.nr_cpus(), 64);
        assert_eq!(p.cpu_smt_mask(5), m("5,37"));
        assert_eq!(p.cpu_smt_mask(48), m("16,48"));
        assert_eq!(p.cpu_package_mask(0), m("0-15,32-47"));
        assert_eq!(p.cpu_llc_mask(20), m("16-31,48-63"));
        assert_eq!(p.cpumask_of_node(1), m("16-31,48-63"));
        assert_eq!(p.node_distance(0, 1), 21);
        assert_eq!(p.smt_throughput_ppm, 600_000);
        assert!(p.preempt_dynamic && p.preempt == PreemptModel::Voluntary);
        let st: Vec<(&str, u64, u64)> = p
            .idle_states(0)
            .iter()
            .map(|s| {
                (
                    s.name.as_str(),
                    s.exit_latency_ns.0 / 1000,
                    s.target_residency_ns.0 / 1000,
                )
            })
            .collect();
        // [S5] skx_cstates: C1 2/2, C1E 10/20, C6 133/600 µs (plus the POLL state).
        assert_eq!(
            st,
            vec![
                ("POLL", 0, 0),
                ("C1", 2, 2),
                ("C1E", 10, 20),
                ("C6", 133, 600)
            ]
        );
        assert!(p.idle_states(0)[0].polling);
        let c = p.costs(63);
        assert_eq!(c.c_migrate_cold, Some(Nanos::from_us(10)));
        assert_eq!(c.c_xfer_per_KB, Some(Nanos(80)));
        assert_eq!(c.c_xfer_per_KB_remote_node, Some(Nanos(250)));
        assert_eq!(c.c_cil_push_per_item, Some(Nanos(500)));
    }

    #[test]
    fn altra_and_x86_80() {
        let p = Platform::builtin("altra-80").unwrap();
        assert_eq!(p.llc_level, LlcLevel::Cls);
        assert_eq!(p.cpu_cluster_mask(9), m("8-9"));
        assert_eq!(p.costs(0).c_migrate_cold, Some(Nanos::from_us(8)));
        assert_eq!(p.costs(0).lat_ipi, Nanos(1_500));
        let q = Platform::builtin("altra-80-llc80").unwrap();
        assert_eq!(q.llc_level, LlcLevel::Mc);
        assert_eq!(q.cpu_llc_mask(9), m("0-79"));
        assert_eq!(q.cpu_cluster_mask(9), m("8-9"));
        let x = Platform::builtin("x86-2s-80").unwrap();
        assert_eq!(x.nr_cpus(), 80);
        assert_eq!(x.cpu_smt_mask(3), m("3,43"));
        assert_eq!(x.cpus[0].freq_max_khz, 2_400_000);
        assert_eq!(x.costs(0).c_ttwu, Nanos(350)); // inherited x86 server column
    }

    #[test]
    fn rb5_per_class_costs() {
        let p = Platform::builtin("rb5").unwrap();
        // smp.md §6.1 capacities and DT frequencies.
        assert_eq!(p.classes[0].capacity_orig, 284);
        assert_eq!(p.classes[1].capacity_orig, 871);
        assert_eq!(p.classes[2].capacity_orig, 1024);
        assert_eq!(p.cpus[0].freq_max_khz, 1_804_800);
        assert_eq!(p.cpus[7].freq_max_khz, 2_841_600);
        assert_eq!(p.freq_domains, vec![m("0-3"), m("4-6"), m("7")]);
        // Table 1.11-A RB5: c_ttwu 0.31 gold / 0.26 prime / 1.0 A55.
        assert_eq!(p.costs(0).c_ttwu, Nanos(1_000));
        assert_eq!(p.costs(5).c_ttwu, Nanos(310));
        assert_eq!(p.costs(7).c_ttwu, Nanos(260));
        assert_eq!(p.costs(7).c_clock, Nanos(25));
        assert_eq!(p.costs(0).lat_ipi, Nanos(2_500));
        // Table 1.11-B values (gold reference, 871) scaled per §0.2: silver 0.35 × 871/284
        // = 1.0734 µs, prime 0.35 × 871/1024 = 0.2977 µs.
        assert_eq!(p.costs(5).c_pipe_write, Nanos(350));
        assert_eq!(p.costs(2).c_pipe_write, Nanos(1_073));
        assert_eq!(p.costs(7).c_pipe_write, Nanos(298));
        // "2 / —": one warm-migration value for every core; cache-line latency unscaled.
        assert!((0..8).all(|c| p.costs(c).c_migrate_warm == Nanos::from_us(2)));
        assert!((0..8).all(|c| p.costs(c).c_line_llc == Some(Nanos(40))));
        // smp.md §7.2 idle states.
        let silver = &p.idle_states(0)[1];
        assert_eq!(silver.name, "silver-rail-power-collapse");
        assert_eq!(
            (
                silver.entry_latency_ns,
                silver.exit_latency_ns,
                silver.target_residency_ns
            ),
            (
                Nanos::from_us(360),
                Nanos::from_us(531),
                Nanos::from_us(3934)
            )
        );
        assert_eq!(silver.governor_exit_latency_ns(), Nanos::from_us(891));
        assert_eq!(p.idle_states(7)[1].exit_latency_ns, Nanos::from_us(1061));
        let cl = &p.cluster_idle_states[0];
        assert_eq!(cl.cpus, m("0-7"));
        assert_eq!(
            (
                cl.entry_latency_ns,
                cl.exit_latency_ns,
                cl.target_residency_ns
            ),
            (
                Nanos::from_us(3264),
                Nanos::from_us(6562),
                Nanos::from_us(9987)
            )
        );
        assert_eq!(p.governor, Governor::Schedutil);
    }

    #[test]
    fn host_profile() {
        let p = Platform::builtin("host").unwrap();
        assert_eq!(p.nr_cpus(), 2);
        assert_eq!(p.preempt, PreemptModel::None);
        assert_eq!(p.hz, 250);
        assert_eq!(p.idle_states(0)[1].name, "haltpoll");
        assert_eq!(p.costs(0).c_ctxsw_process, Nanos(550)); // §2.5 provisional
        assert_eq!(p.costs(0).c_syscall, Nanos(75)); // x86 0.15 × 0.5
    }

    #[test]
    fn smp_specs() {
        let p = Platform::resolve("smp:8").unwrap();
        assert_eq!(p.nr_cpus(), 8);
        assert_eq!(p.hz, 250);
        assert_eq!(p.preempt, PreemptModel::Full);
        assert_eq!(p.costs(7).c_ctxsw_process, Nanos(1_300)); // x86 server column
        assert_eq!(p.source, "smp:8");
        for bad in ["smp:0", "smp:", "smp:-1", "smp:1025", "smp:4x"] {
            let e = Platform::resolve(bad).unwrap_err();
            assert!(matches!(e, PlatformError::BadSpec { .. }), "{bad}: {e}");
        }
        let e = Platform::resolve("pi5").unwrap_err().to_string();
        assert!(
            e.contains("unknown platform `pi5`") && e.contains("rpi5"),
            "{e}"
        );
    }

    #[test]
    fn user_file_by_path() {
        let dir = std::env::temp_dir().join(format!("schedlab-platform-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("mine.toml");
        std::fs::write(
            &path,
            "extends = \"xeon-2s-64\"\nname = \"mine\"\ndescription = \"HZ 1000 Xeon\"\n[kernel]\nhz = 1000\n",
        )
        .unwrap();
        let p = Platform::resolve(path.to_str().unwrap()).unwrap();
        assert_eq!((p.name.as_str(), p.hz, p.nr_cpus()), ("mine", 1000, 64));
        assert_eq!(p.preempt, PreemptModel::Voluntary);
        let e = Platform::load(dir.join("missing.toml")).unwrap_err();
        assert!(matches!(e, PlatformError::Io { .. }));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn program_costs_section() {
        // Written values: "1.9 ms" = 1 900 000 ns; a bare number is µs (1700 µs).
        let p = load("[programs.schbench]\nw_matmul = \"1.9 ms\"  # from a test\n").unwrap();
        assert_eq!(
            p.programs.get("schbench", "w_matmul"),
            Some(Nanos(1_900_000))
        );
        assert_eq!(p.programs.get("schbench", "other"), None);
        let prov = p.provenance_of("programs.schbench.w_matmul").unwrap();
        assert_eq!(
            (prov.at.as_str(), prov.comment.as_str()),
            ("t.toml:5", "from a test")
        );
        let s = p.show();
        assert!(s.contains("schbench.w_matmul"), "{s}");
        assert!(s.contains("1900  # from a test"), "{s}");
        let p = load("[programs.schbench]\nw_matmul = 1700\n").unwrap();
        assert_eq!(
            p.programs.get("schbench", "w_matmul"),
            Some(Nanos(1_700_000))
        );
        // None given: the model's default applies; show says so with a dash.
        let p = load("").unwrap();
        assert!(p.programs.is_empty());
        assert!(p.show().contains("— = the model's default"));
        // The section of a base platform is inherited through `extends` (altra-80-llc80).
        let llc80 = Platform::builtin("altra-80-llc80").unwrap();
        assert_eq!(
            llc80.programs.get("schbench", "w_matmul"),
            Platform::builtin("altra-80")
                .unwrap()
                .programs
                .get("schbench", "w_matmul")
        );
        // A switch is true/false, read back as 1/0; `show` prints on/off.
        let p = load("[programs.make]\ngcc_pipe = true\nobjtool = false\n").unwrap();
        assert_eq!(p.programs.get("make", "gcc_pipe"), Some(Nanos(1)));
        assert_eq!(p.programs.get("make", "objtool"), Some(Nanos(0)));
        let s = p.show();
        assert!(s.contains("make.gcc_pipe") && s.contains(" on"), "{s}");
        assert!(
            err("[programs.make]\ngcc_pipe = 1\n").starts_with("t.toml:5: programs.make.gcc_pipe")
        );
        // The seed-003 machines: x86 Kbuild adds -pipe, arm64 does not.
        let xeon = Platform::builtin("xeon-2s-64").unwrap();
        assert_eq!(xeon.programs.get("make", "gcc_pipe"), Some(Nanos(1)));
        let altra = Platform::builtin("altra-80").unwrap();
        assert_eq!(altra.programs.get("make", "gcc_pipe"), Some(Nanos(0)));
        // Typos never pass silently.
        assert_eq!(
            err("[programs.schbnch]\nw_matmul = 1\n"),
            "t.toml:4: programs.schbnch: no costs are defined for this program (known: schbench, stress-ng, dbench, make, llama-batched-bench, netperf, tbench)"
        );
        assert_eq!(
            err("[programs.schbench]\nw_matmull = 1\n"),
            "t.toml:5: programs.schbench.w_matmull: unknown key"
        );
        // the one-hour cap (campaign: w_token = 8589934592000000 µs overflowed the llama
        // model's graph work); 3600 s itself is allowed
        assert_eq!(
            load("[programs.make]\nlink = \"3600 s\"\n")
                .unwrap()
                .programs
                .get("make", "link"),
            Some(Nanos(3_600_000_000_000))
        );
        assert_eq!(
            err("[programs.llama-batched-bench]\nw_token = 8589934592000000\n"),
            "t.toml:5: programs.llama-batched-bench.w_token: 8589934592000000000 ns is more than \
             the 3600 s (one hour) of work one program cost may be"
        );
        assert_eq!(
            err("[programs.make]\nw_cc1 = \"3600.000000001 s\"\n"),
            "t.toml:5: programs.make.w_cc1: 3600000000001 ns is more than the 3600 s (one hour) \
             of work one program cost may be"
        );
        assert_eq!(
            err("[programs.schbench]\nw_matmul = \"fast\"\n"),
            "t.toml:5: programs.schbench.w_matmul: `fast`: unit must be ns, us, µs, ms or s"
        );
    }

    #[test]
    fn errors_name_file_line_and_key() {
        // Line numbers: PREFIX has 3 lines, so `body` starts at line 4.
        assert_eq!(
            err("[[cpu_class]]\nname = \"x\"\ncapacity = 2000\nfreq_max_mhz = 1000\n"),
            "t.toml:6: cpu_class[0].capacity: must be 1..=1024"
        );
        assert_eq!(
            err("[kernel]\nhz = 251\n"),
            "t.toml:5: kernel.hz: must be one of the CONFIG_HZ choices 100, 250, 300, 1000"
        );
        assert_eq!(
            err("[kernel]\npreempt = \"fast\"\n"),
            "t.toml:5: kernel.preempt: `fast`: expected none, voluntary, full, lazy or rt"
        );
        assert_eq!(
            err("[costs]\nc_tttwu = 0.3\n"),
            "t.toml:5: costs.c_tttwu: unknown key"
        );
        assert_eq!(
            err("[costs]\nc_ttwu = \"fast\"\n"),
            "t.toml:5: costs.c_ttwu: `fast`: unit must be ns, us, µs, ms or s"
        );
        assert_eq!(
            err("[costs]\nc_ttwu = 0.0001\n"),
            "t.toml:5: costs.c_ttwu: `0.0001` has more than 3 decimal places (finer than the stored unit)"
        );
        assert_eq!(
            err("[costs]\nc_ttwu = \"n/a\"\n"),
            "t.toml:5: costs.c_ttwu: is required on every platform and cannot be n/a"
        );
        assert_eq!(
            err("[kernel]\nisolcpus = \"2-1\"\n"),
            "t.toml:5: kernel.isolcpus: bad cpulist `2-1`: range 2-1 is backwards"
        );
        assert_eq!(
            err("[kernel]\nnohz_full = \"9\"\n[topology]\ncores_per_cluster = 4\n"),
            "t.toml:5: kernel.nohz_full: CPUs 9 do not exist"
        );
        assert_eq!(
            err("[topology]\ncores_per_cluster = 4\nnuma_distance = [[10, 20], [20, 10]]\n"),
            "t.toml:6: topology.numa_distance: has 2 rows, expected 1 (one per node)"
        );
        assert_eq!(
            err("[topology]\ncpus = 4\ncore = [0, 0, 1, 1]\ncluster = [0, 1, 1, 1]\n"),
            "t.toml:6: topology.core: CPUs 0 and 1 share core 0 but not cluster (0 vs 1)"
        );
        assert_eq!(
            err("[topology]\ncores_per_cluster = 2\nextra = 1\n"),
            "t.toml:6: topology.extra: unknown key"
        );
        assert_eq!(
            err("[topology]\ncores_per_cluster = \"4\"\n"),
            "t.toml:5: topology.cores_per_cluster: expected an integer, found a string"
        );
        assert_eq!(
            err("[[cpu_class]]\nname = \"x\"\nfreq_max_mhz = 1000\n"),
            "t.toml:4: cpu_class[0].capacity: required key is missing"
        );
        // Validation that spans classes: capacity-dmips-mhz normalisation (smp.md §6.1).
        assert_eq!(
            err("[topology]\ncores_per_cluster = 2\n\
                 [[cpu_class]]\nname = \"a\"\ncpus = \"0\"\ncapacity = 300\ncapacity_dmips_mhz = 448\nfreq_max_mhz = 1804.8\n\
                 [[cpu_class]]\nname = \"b\"\ncpus = \"1\"\ncapacity_dmips_mhz = 1024\nfreq_max_mhz = 2841.6\n"),
            "t.toml:9: cpu_class[0].capacity: 300 disagrees with capacity_dmips_mhz × freq_max normalised to 1024 = 284"
        );
        let e = err("[[cpu_class]]\nname = \"x\"\ncpus = \"0-1\"\ncapacity = 1024\nfreq_max_mhz = 1\n[topology]\ncores_per_cluster = 4\n");
        assert!(
            e.ends_with("cpu_class: CPUs 2-3 belong to no cpu_class"),
            "{e}"
        );
        // Syntax errors: file, line and column from the toml crate.
        let e = err("[kernel]\nhz = = 3\n");
        assert!(e.starts_with("t.toml:5:6: "), "{e}");
        // extends must name a built-in.
        let e = Platform::from_toml_str("extends = \"vax\"\nname = \"v\"\n", "v.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("v.toml:1: extends: `vax` is not a built-in platform"),
            "{e}"
        );
        let e = Platform::from_toml_str("extends = \"rpi5\"\n", "v.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("v.toml:1: name: required in a file that extends `rpi5`"),
            "{e}"
        );
    }

    /// A cost near 2^64 ns (fuzz campaign, platform seed 3930658) is refused, not added to
    /// the clock until it overflows.
    #[test]
    fn a_cost_above_one_second_is_refused() {
        let e = err("[costs]\nc_atomic = \"18446744073709551615ns\"\n");
        assert!(e.contains("costs.c_atomic"), "{e}");
        assert!(e.contains("more than the 1 s"), "{e}");
        // one second itself is accepted
        assert!(load("[costs]\nc_atomic = \"1s\"\n").is_ok());
    }

    #[test]
    fn dmips_capacity_is_computed_when_omitted() {
        // smp.md §6.1: 448 × 1804.8 MHz vs 1024 × 2841.6 MHz -> 284 and 1024.
        let p = load(
            "[topology]\ncores_per_cluster = 2\n\
             [[cpu_class]]\nname = \"a\"\ncpus = \"0\"\ncapacity_dmips_mhz = 448\nfreq_max_mhz = 1804.8\n\
             [[cpu_class]]\nname = \"b\"\ncpus = \"1\"\ncapacity_dmips_mhz = 1024\nfreq_max_mhz = 2841.6\n",
        )
        .unwrap();
        assert_eq!((p.capacity_orig(0), p.capacity_orig(1)), (284, 1024));
    }
}
