//! JSON tree → [`RtAppFile`]: key classification (exact property names first, then event
//! prefixes in the spec's order), duplicate-key renaming, type and range checks, and the checks
//! that need the whole file (fork/resume targets, mutex discipline, taskgroup/policy rules).

use std::collections::{BTreeMap, BTreeSet};

use super::json::{self, Kind, Member, Value};
use super::model::{
    Calibration, Event, EventKind, Global, Phase, Policy, Pos, Properties, RtAppFile, TaskDef,
    Timer, TimerMode, Warning,
};
use super::RtAppError;

type R<T> = Result<T, RtAppError>;

/// rt-app's build-time limit on distinct taskgroups (`max_nbr_tgs`, spec §10.3).
const MAX_TASKGROUPS: usize = 32;

/// Kernel clamp of a fair custom slice, in µs (fair.md §3.2: 0.1 ms … 100 ms).
const FAIR_SLICE_MIN_US: u64 = 100;
const FAIR_SLICE_MAX_US: u64 = 100_000;

pub(crate) fn parse_file(text: &str, file: &str) -> R<RtAppFile> {
    let mut cx = Cx {
        file,
        warnings: Vec::new(),
        task_refs: Vec::new(),
    };
    let root = json::parse(text).map_err(|e| cx.err(e.pos, e.message))?;
    let Kind::Object(top) = &root.kind else {
        return Err(cx.err(
            root.pos,
            format!(
                "an rt-app file is one JSON object, found {}",
                root.kind.describe()
            ),
        ));
    };
    let top = unique_members(&mut cx, top, "the top-level object", |_| false)?;

    // "global" first wherever it is written: tasks need its default_policy.
    let mut global = Global::default();
    for (key, m) in &top {
        if key == "global" {
            global = parse_global(&mut cx, &m.value)?;
        }
    }
    let mut tasks_value = None;
    for (key, m) in &top {
        match key.as_str() {
            "global" => {}
            "tasks" => tasks_value = Some(&m.value),
            "resources" => {
                object(&cx, &m.value, "\"resources\"")?;
                cx.warn(
                    m.key_pos,
                    "\"resources\" is accepted and ignored: resources are created from the \
                     names events use",
                );
            }
            other => {
                return Err(cx.err(
                    m.key_pos,
                    format!(
                        "unknown top-level key {other:?} (expected \"global\", \"tasks\" or \
                         \"resources\")"
                    ),
                ))
            }
        }
    }
    let Some(tasks_value) = tasks_value else {
        return Err(cx.err(root.pos, "missing \"tasks\" object"));
    };
    let task_members = object(&cx, tasks_value, "\"tasks\"")?;
    if task_members.is_empty() {
        return Err(cx.err(
            tasks_value.pos,
            "\"tasks\" is empty: define at least one task",
        ));
    }
    // Task names only label threads, so a repeated one is renamed like an event key.
    let task_members = unique_members(&mut cx, task_members, "\"tasks\"", |_| true)?;

    let mut tasks = Vec::with_capacity(task_members.len());
    for (name, m) in &task_members {
        tasks.push(parse_task(&mut cx, name, m, &global)?);
    }
    let threads: u64 = tasks.iter().map(|t| u64::from(t.instance)).sum();
    if threads > MAX_INSTANCES {
        return Err(cx.err(
            tasks_value.pos,
            format!(
                "the tasks' \"instance\" values add up to {threads} threads, more than the \
                 {MAX_INSTANCES} a default pid_max allows"
            ),
        ));
    }
    check_taskgroup_count(&cx, &tasks)?;
    check_task_refs(&mut cx, &tasks)?;
    for task in &tasks {
        check_mutexes(&mut cx, task)?;
    }
    warn_unmatched(&mut cx, &tasks);

    Ok(RtAppFile {
        global,
        tasks,
        warnings: cx.warnings,
    })
}

struct Cx<'f> {
    file: &'f str,
    warnings: Vec<Warning>,
    /// `fork`/`resume` targets with the position of their value, checked once all task names
    /// are known.
    task_refs: Vec<(&'static str, String, Pos)>,
}

impl Cx<'_> {
    fn err(&self, pos: Pos, message: impl Into<String>) -> RtAppError {
        RtAppError::Invalid {
            file: self.file.to_string(),
            pos,
            message: message.into(),
        }
    }

    fn warn(&mut self, pos: Pos, message: impl Into<String>) {
        self.warnings.push(Warning {
            file: self.file.to_string(),
            pos,
            message: message.into(),
        });
    }
}

// ---------------------------------------------------------------------------------------------
// Typed getters. `what` is the quoted key, so messages read `"run0": expected ...`.

fn type_error(cx: &Cx, v: &Value, what: &str, expected: &str) -> RtAppError {
    let found = match &v.kind {
        Kind::Float(f) => format!("{f}"),
        k => k.describe().to_string(),
    };
    cx.err(v.pos, format!("{what}: expected {expected}, found {found}"))
}

fn int(cx: &Cx, v: &Value, what: &str, expected: &str) -> R<i64> {
    match v.kind {
        Kind::Int(i) => Ok(i),
        _ => Err(type_error(cx, v, what, expected)),
    }
}

/// Longest time any rt-app value may give, in µs: the simulator's cap of 2^33 s
/// ([`schedlab_engine::MAX_SIM_SECS`]), so that every µs → ns product fits `u64` with room
/// for the sums the model forms from it.
pub(crate) const MAX_US: u64 = schedlab_engine::MAX_SIM_SECS * 1_000_000;

/// Most threads one rt-app file may start (Σ `instance`): the default `pid_max`, as for
/// every other workload ([`crate::cmdline::MAX_TASKS`]).
pub(crate) const MAX_INSTANCES: u64 = crate::cmdline::MAX_TASKS;

fn micros(cx: &Cx, v: &Value, what: &str) -> R<u64> {
    const EXPECTED: &str = "a non-negative integer number of microseconds";
    let i = int(cx, v, what, EXPECTED)?;
    let us = u64::try_from(i)
        .map_err(|_| cx.err(v.pos, format!("{what}: expected {EXPECTED}, found {i}")))?;
    if us > MAX_US {
        return Err(cx.err(
            v.pos,
            format!(
                "{what}: {us} µs is longer than the {MAX_US} µs (2^33 s) schedlab can simulate"
            ),
        ));
    }
    Ok(us)
}

fn string<'v>(cx: &Cx, v: &'v Value, what: &str) -> R<&'v str> {
    match &v.kind {
        Kind::Str(s) => Ok(s),
        _ => Err(type_error(cx, v, what, "a string")),
    }
}

/// A resource or task name: a non-empty string.
fn name(cx: &Cx, v: &Value, what: &str) -> R<String> {
    let s = string(cx, v, what)?;
    if s.is_empty() {
        return Err(cx.err(v.pos, format!("{what}: the name must not be empty")));
    }
    Ok(s.to_string())
}

fn boolean(cx: &Cx, v: &Value, what: &str) -> R<bool> {
    match v.kind {
        Kind::Bool(b) => Ok(b),
        _ => Err(type_error(cx, v, what, "true or false")),
    }
}

fn object<'v>(cx: &Cx, v: &'v Value, what: &str) -> R<&'v [Member]> {
    match &v.kind {
        Kind::Object(m) => Ok(m),
        _ => Err(type_error(cx, v, what, "an object")),
    }
}

fn u32_list(cx: &Cx, v: &Value, what: &str) -> R<Vec<u32>> {
    const EXPECTED: &str = "an array of non-negative integers";
    let Kind::Array(items) = &v.kind else {
        return Err(type_error(cx, v, what, EXPECTED));
    };
    if items.is_empty() {
        return Err(cx.err(v.pos, format!("{what}: the array must not be empty")));
    }
    items
        .iter()
        .map(|item| {
            let i = int(cx, item, what, "a non-negative integer")?;
            u32::try_from(i).map_err(|_| {
                cx.err(
                    item.pos,
                    format!("{what}: expected a non-negative integer, found {i}"),
                )
            })
        })
        .collect()
}

/// `loop` at task or phase level: −1 = forever, otherwise a positive count. rt-app would take
/// 0 to mean "never" (thread) or misbehave (phase); we reject it as almost surely a typo.
fn loop_count(cx: &Cx, v: &Value) -> R<i64> {
    const EXPECTED: &str = "-1 (forever) or a positive count";
    let i = int(cx, v, "\"loop\"", EXPECTED)?;
    if i == -1 || i >= 1 {
        Ok(i)
    } else {
        Err(cx.err(v.pos, format!("\"loop\": expected {EXPECTED}, found {i}")))
    }
}

// ---------------------------------------------------------------------------------------------
// Duplicate keys.

/// The object's members with repeated keys made unique, in file order.
///
/// rt-app's companion script workgen appends an index to the second and later duplicates
/// (spec §10.1). Our scheme: a repeated key `k` becomes `k<n>` for the smallest n ≥ 1 such that
/// `k<n>` is neither a key written anywhere in this object nor a name already given, so a
/// rename never collides with a key written later (workgen shares one counter across keys and
/// only looks backwards). Only keys for which `renamable` holds are renamed — event keys keep
/// their type because the prefix is kept, task and phase names are only labels. Any other
/// repeated key is an error: rt-app's JSON reader would silently keep a single value.
fn unique_members<'v>(
    cx: &mut Cx,
    members: &'v [Member],
    context: &str,
    renamable: impl Fn(&str) -> bool,
) -> R<Vec<(String, &'v Member)>> {
    let written: BTreeSet<&str> = members.iter().map(|m| m.key.as_str()).collect();
    let mut given: BTreeMap<String, Pos> = BTreeMap::new();
    let mut out = Vec::with_capacity(members.len());
    for m in members {
        let Some(&first) = given.get(&m.key) else {
            given.insert(m.key.clone(), m.key_pos);
            out.push((m.key.clone(), m));
            continue;
        };
        if !renamable(&m.key) {
            return Err(cx.err(
                m.key_pos,
                format!(
                    "duplicate key {:?} in {context} (first at {first}); only event keys and \
                     task or phase names may repeat",
                    m.key
                ),
            ));
        }
        let mut n = 1u32;
        let new_key = loop {
            let candidate = format!("{}{n}", m.key);
            if !written.contains(candidate.as_str()) && !given.contains_key(&candidate) {
                break candidate;
            }
            n += 1;
        };
        cx.warn(
            m.key_pos,
            format!(
                "duplicate key {:?} in {context} (first at {first}) renamed to {new_key:?}, as \
                 rt-app's workgen does",
                m.key
            ),
        );
        given.insert(new_key.clone(), m.key_pos);
        out.push((new_key, m));
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Key classification.

/// Event types by key prefix, tested in this order (spec §10.4): `runtime` before `run`,
/// `memrun` before `mem`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EventType {
    Lock,
    Unlock,
    Wait,
    Signal,
    Broad,
    Sync,
    Sleep,
    Runtime,
    Run,
    Timer,
    Suspend,
    Resume,
    Memrun,
    Mem,
    Iorun,
    Yield,
    Barrier,
    Fork,
    SemPost,
    SemWait,
}

const EVENT_PREFIXES: [(&str, EventType); 20] = [
    ("lock", EventType::Lock),
    ("unlock", EventType::Unlock),
    ("wait", EventType::Wait),
    ("signal", EventType::Signal),
    ("broad", EventType::Broad),
    ("sync", EventType::Sync),
    ("sleep", EventType::Sleep),
    ("runtime", EventType::Runtime),
    ("run", EventType::Run),
    ("timer", EventType::Timer),
    ("suspend", EventType::Suspend),
    ("resume", EventType::Resume),
    ("memrun", EventType::Memrun),
    ("mem", EventType::Mem),
    ("iorun", EventType::Iorun),
    ("yield", EventType::Yield),
    ("barrier", EventType::Barrier),
    ("fork", EventType::Fork),
    ("sem_post", EventType::SemPost),
    ("sem_wait", EventType::SemWait),
];

fn event_type(key: &str) -> Option<(&'static str, EventType)> {
    EVENT_PREFIXES
        .iter()
        .find(|(prefix, _)| key.starts_with(prefix))
        .copied()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Prop {
    Policy,
    Priority,
    DlRuntime,
    DlPeriod,
    DlDeadline,
    Cpus,
    Taskgroup,
    UtilMin,
    UtilMax,
    NodesMembind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Level {
    /// A task object with a `"phases"` member: it holds properties only.
    TaskWithPhases,
    /// A task object without `"phases"`: it is also the single phase and holds the events.
    TaskAsPhase,
    Phase,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Instance,
    Delay,
    Loop,
    Phases,
    Prop(Prop),
    /// rt-app's pre-`dl-` spellings, read at task level only (tutorial: "the key "runtime"
    /// will also be checked in thread object").
    Legacy(Prop),
    Event(&'static str, EventType),
    Unknown,
}

/// Exact names first (properties and structure), then event prefixes — the way rt-app looks a
/// property up by name and an event by prefix. The one key that is both, `runtime`, is the
/// legacy dl-runtime alias only in a task that has `"phases"` (where events cannot be); in a
/// phase, or a task without phases, it is the `runtime` event.
fn classify(key: &str, level: Level) -> Class {
    match key {
        "instance" => Class::Instance,
        "delay" => Class::Delay,
        "loop" => Class::Loop,
        "phases" => Class::Phases,
        "policy" => Class::Prop(Prop::Policy),
        "priority" => Class::Prop(Prop::Priority),
        "dl-runtime" => Class::Prop(Prop::DlRuntime),
        "dl-period" => Class::Prop(Prop::DlPeriod),
        "dl-deadline" => Class::Prop(Prop::DlDeadline),
        "cpus" => Class::Prop(Prop::Cpus),
        "taskgroup" => Class::Prop(Prop::Taskgroup),
        "util_min" => Class::Prop(Prop::UtilMin),
        "util_max" => Class::Prop(Prop::UtilMax),
        "nodes_membind" => Class::Prop(Prop::NodesMembind),
        "period" => Class::Legacy(Prop::DlPeriod),
        "deadline" => Class::Legacy(Prop::DlDeadline),
        "runtime" if level == Level::TaskWithPhases => Class::Legacy(Prop::DlRuntime),
        _ => match event_type(key) {
            Some((prefix, t)) => Class::Event(prefix, t),
            None => Class::Unknown,
        },
    }
}

fn unknown_key(cx: &Cx, m: &Member, key: &str, level: Level) -> RtAppError {
    let where_ = match level {
        Level::Phase => "phase",
        _ => "task",
    };
    cx.err(
        m.key_pos,
        format!(
            "unknown {where_} key {key:?}: not a property, and no event type is a prefix of it"
        ),
    )
}

// ---------------------------------------------------------------------------------------------
// global

fn parse_global(cx: &mut Cx, v: &Value) -> R<Global> {
    let members = object(cx, v, "\"global\"")?;
    let members = unique_members(cx, members, "\"global\"", |_| false)?;
    let mut g = Global::default();
    for (key, m) in members {
        let what = format!("{key:?}");
        let v = &m.value;
        match key.as_str() {
            "duration" => {
                const EXPECTED: &str = "-1 (until every thread finishes) or a positive number \
                                        of seconds";
                g.duration_s = match int(cx, v, &what, EXPECTED)? {
                    -1 => None,
                    s if s >= 1 && s as u64 > schedlab_engine::MAX_SIM_SECS => {
                        return Err(cx.err(
                            v.pos,
                            format!(
                            "{what}: {s} s is longer than the {} s (2^33 s) schedlab can simulate",
                            schedlab_engine::MAX_SIM_SECS
                        ),
                        ))
                    }
                    s if s >= 1 => Some(s as u64),
                    s => {
                        return Err(cx.err(v.pos, format!("{what}: expected {EXPECTED}, found {s}")))
                    }
                };
            }
            "calibration" => {
                const EXPECTED: &str = "\"CPU<n>\" or a positive number of ns per loop";
                g.calibration = match &v.kind {
                    Kind::Int(ns) if *ns >= 1 => Calibration::NsPerLoop(*ns as u64),
                    Kind::Str(s) => s
                        .strip_prefix("CPU")
                        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                        .and_then(|n| n.parse::<u32>().ok())
                        .map(Calibration::Cpu)
                        .ok_or_else(|| {
                            cx.err(v.pos, format!("{what}: expected {EXPECTED}, found {s:?}"))
                        })?,
                    Kind::Int(ns) => {
                        return Err(
                            cx.err(v.pos, format!("{what}: expected {EXPECTED}, found {ns}"))
                        )
                    }
                    _ => return Err(type_error(cx, v, &what, EXPECTED)),
                };
            }
            "default_policy" => g.default_policy = policy(cx, v, &what)?,
            "pi_enabled" => g.pi_enabled = boolean(cx, v, &what)?,
            "logdir" | "log_basename" | "io_device" => {
                string(cx, v, &what)?;
                ignored(cx, m, &key);
            }
            "log_size" => {
                match &v.kind {
                    Kind::Int(_) => {}
                    Kind::Str(s) if matches!(s.as_str(), "file" | "disable" | "auto") => {}
                    _ => {
                        return Err(type_error(
                            cx,
                            v,
                            &what,
                            "a size in MB or one of \"file\", \"disable\", \"auto\"",
                        ))
                    }
                }
                ignored(cx, m, &key);
            }
            "ftrace" => {
                // A boolean is rt-app's deprecated spelling, still accepted there.
                if !matches!(v.kind, Kind::Str(_) | Kind::Bool(_)) {
                    return Err(type_error(cx, v, &what, "a string of categories"));
                }
                ignored(cx, m, &key);
            }
            "gnuplot" | "lock_pages" | "cumulative_slack" => {
                boolean(cx, v, &what)?;
                ignored(cx, m, &key);
            }
            "mem_buffer_size" => {
                bytes(cx, v, &what)?;
                ignored(cx, m, &key);
            }
            _ => return Err(cx.err(m.key_pos, format!("unknown key {what} in \"global\""))),
        }
    }
    Ok(g)
}

fn bytes(cx: &Cx, v: &Value, what: &str) -> R<u64> {
    const EXPECTED: &str = "a non-negative number of bytes";
    let i = int(cx, v, what, EXPECTED)?;
    u64::try_from(i).map_err(|_| cx.err(v.pos, format!("{what}: expected {EXPECTED}, found {i}")))
}

fn ignored(cx: &mut Cx, m: &Member, key: &str) {
    cx.warn(
        m.key_pos,
        format!("global {key:?} is accepted and ignored by schedlab"),
    );
}

fn policy(cx: &Cx, v: &Value, what: &str) -> R<Policy> {
    let s = string(cx, v, what)?;
    Policy::from_rtapp(s).ok_or_else(|| {
        let all: Vec<&str> = Policy::ALL.iter().map(|p| p.as_str()).collect();
        cx.err(
            v.pos,
            format!(
                "{what}: unknown policy {s:?} (expected one of {})",
                all.join(", ")
            ),
        )
    })
}

// ---------------------------------------------------------------------------------------------
// tasks, phases, properties

/// Where each property was written, for validation messages.
#[derive(Clone, Copy, Debug, Default)]
struct PropPos {
    policy: Option<Pos>,
    priority: Option<Pos>,
    dl: [Option<Pos>; 3],
    taskgroup: Option<Pos>,
    util_max: Option<Pos>,
    /// The object's own key, for errors about the object as a whole.
    object: Pos,
}

fn dl_index(p: Prop) -> usize {
    match p {
        Prop::DlRuntime => 0,
        Prop::DlPeriod => 1,
        _ => 2,
    }
}

const DL_KEYS: [&str; 3] = ["dl-runtime", "dl-period", "dl-deadline"];

/// Reads one property value into `props`. `key` is the key as written (`period` for the
/// legacy alias of `dl-period`).
fn set_prop(
    cx: &mut Cx,
    props: &mut Properties,
    at: &mut PropPos,
    prop: Prop,
    key: &str,
    m: &Member,
) -> R<()> {
    let what = format!("{key:?}");
    let v = &m.value;
    match prop {
        Prop::Policy => {
            props.policy = Some(policy(cx, v, &what)?);
            at.policy = Some(v.pos);
        }
        Prop::Priority => {
            let i = int(cx, v, &what, "an integer")?;
            // The range depends on the policy in force; see check_properties.
            let p = i32::try_from(i)
                .map_err(|_| cx.err(v.pos, format!("{what}: {i} is out of range")))?;
            props.priority = Some(p);
            at.priority = Some(v.pos);
        }
        Prop::DlRuntime | Prop::DlPeriod | Prop::DlDeadline => {
            let i = dl_index(prop);
            if let Some(first) = at.dl[i] {
                return Err(cx.err(
                    m.key_pos,
                    format!(
                        "{what} sets {} again (already set at {first}); give either \"{}\" or its \
                         legacy alias, not both",
                        DL_KEYS[i], DL_KEYS[i]
                    ),
                ));
            }
            let us = micros(cx, v, &what)?;
            match prop {
                Prop::DlRuntime => props.dl_runtime_us = Some(us),
                Prop::DlPeriod => props.dl_period_us = Some(us),
                _ => props.dl_deadline_us = Some(us),
            }
            at.dl[i] = Some(m.key_pos);
        }
        Prop::Cpus => {
            let list = u32_list(cx, v, &what)?;
            // The same limit as a cpulist (`cpus=` placement): CONFIG_NR_CPUS at most 8192,
            // so that a typo cannot ask for a mask of 2^32 bits.
            let max = schedlab_platform::cpumask::CPULIST_MAX_CPU;
            if let Some(c) = list.iter().find(|&&c| c as usize > max) {
                return Err(cx.err(v.pos, format!("{what}: CPU {c} is above {max}")));
            }
            props.cpus = Some(list)
        }
        Prop::NodesMembind => {
            props.nodes_membind = Some(u32_list(cx, v, &what)?);
            cx.warn(
                m.key_pos,
                "\"nodes_membind\" is recorded but has no effect: schedlab has no NUMA memory \
                 placement",
            );
        }
        Prop::Taskgroup => {
            let s = string(cx, v, &what)?;
            if s.is_empty() {
                // rt-app: "" = no taskgroup data, i.e. nothing changes.
                props.taskgroup = None;
            } else if !s.starts_with('/') {
                return Err(cx.err(
                    v.pos,
                    format!("{what}: taskgroup {s:?} must start with '/' (a path under the cpu controller)"),
                ));
            } else {
                props.taskgroup = Some(s.to_string());
                at.taskgroup = Some(v.pos);
            }
        }
        Prop::UtilMin | Prop::UtilMax => {
            const EXPECTED: &str = "a utilization clamp 0..=1024 (or -1 for no change)";
            let i = int(cx, v, &what, EXPECTED)?;
            let clamp = match i {
                -1 => None,
                0..=1024 => Some(i as u32),
                _ => return Err(cx.err(v.pos, format!("{what}: expected {EXPECTED}, found {i}"))),
            };
            if prop == Prop::UtilMin {
                props.util_min = clamp;
            } else {
                props.util_max = clamp;
                at.util_max = Some(v.pos);
            }
        }
    }
    Ok(())
}

fn parse_task(cx: &mut Cx, name: &str, tm: &Member, global: &Global) -> R<TaskDef> {
    let members = object(cx, &tm.value, &format!("task {name:?}"))?;
    let level = if members.iter().any(|m| m.key == "phases") {
        Level::TaskWithPhases
    } else {
        Level::TaskAsPhase
    };
    let context = format!("task {name:?}");
    let members = unique_members(cx, members, &context, |k| {
        matches!(classify(k, level), Class::Event(..))
    })?;

    let mut task = TaskDef {
        name: name.to_string(),
        pos: tm.key_pos,
        instance: 1,
        delay_us: 0,
        loop_count: -1,
        properties: Properties::default(),
        phases: Vec::new(),
    };
    let mut at = PropPos {
        object: tm.key_pos,
        ..PropPos::default()
    };
    let mut events = Vec::new();
    let mut phases_value = None;
    let mut runtime_event_pos = None;
    for (key, m) in &members {
        let what = format!("{key:?}");
        match classify(key, level) {
            Class::Instance => {
                const EXPECTED: &str = "a non-negative number of threads";
                let i = int(cx, &m.value, &what, EXPECTED)?;
                task.instance = u32::try_from(i).map_err(|_| {
                    cx.err(
                        m.value.pos,
                        format!("{what}: expected {EXPECTED}, found {i}"),
                    )
                })?;
                if u64::from(task.instance) > MAX_INSTANCES {
                    return Err(cx.err(
                        m.value.pos,
                        format!(
                            "{what}: {i} threads, more than the {MAX_INSTANCES} a default pid_max allows"
                        ),
                    ));
                }
            }
            Class::Delay => task.delay_us = micros(cx, &m.value, &what)?,
            Class::Loop => task.loop_count = loop_count(cx, &m.value)?,
            Class::Phases => phases_value = Some(&m.value),
            Class::Prop(p) | Class::Legacy(p) => {
                set_prop(cx, &mut task.properties, &mut at, p, key, m)?
            }
            Class::Event(prefix, t) => {
                if level == Level::TaskWithPhases {
                    return Err(cx.err(
                        m.key_pos,
                        format!(
                            "event key {what} at task level, but task {name:?} has \"phases\": \
                             put its events in a phase (rt-app would ignore this key)"
                        ),
                    ));
                }
                if m.key == "runtime" {
                    runtime_event_pos = Some(m.key_pos);
                }
                events.push(parse_event(cx, key, m, prefix, t)?);
            }
            Class::Unknown => return Err(unknown_key(cx, m, key, level)),
        }
    }
    if let (Some(pos), None) = (runtime_event_pos, at.dl[0]) {
        cx.warn(
            pos,
            "\"runtime\" in a task without \"phases\" is read as a runtime event; real rt-app \
             also reads this exact key as the legacy dl-runtime alias. Rename it (e.g. \
             \"runtime0\") to keep the two apart",
        );
    }

    let mut phase_at = Vec::new();
    match phases_value {
        Some(pv) => {
            let members = object(cx, pv, "\"phases\"")?;
            if members.is_empty() {
                return Err(cx.err(pv.pos, format!("task {name:?}: \"phases\" is empty")));
            }
            let context = format!("the phases of task {name:?}");
            for (pname, pm) in unique_members(cx, members, &context, |_| true)? {
                let (phase, pat) = parse_phase(cx, &pname, pm)?;
                task.phases.push(phase);
                phase_at.push(pat);
            }
        }
        None => {
            if events.is_empty() {
                return Err(cx.err(
                    tm.key_pos,
                    format!("task {name:?} has no events (rt-app: \"Task must have events or it's useless\")"),
                ));
            }
            // The task object is its own single phase; its "loop" counts whole passes of it,
            // which is the same program as rt-app's (phase loop N, thread loop 1).
            task.phases.push(Phase {
                name: name.to_string(),
                pos: tm.key_pos,
                loop_count: 1,
                properties: Properties::default(),
                events,
            });
            phase_at.push(PropPos {
                object: tm.key_pos,
                ..PropPos::default()
            });
        }
    }
    check_task_properties(cx, &task, &at, &phase_at, global)?;
    Ok(task)
}

fn parse_phase(cx: &mut Cx, name: &str, pm: &Member) -> R<(Phase, PropPos)> {
    let context = format!("phase {name:?}");
    let members = object(cx, &pm.value, &context)?;
    let members = unique_members(cx, members, &context, |k| {
        matches!(classify(k, Level::Phase), Class::Event(..))
    })?;
    let mut phase = Phase {
        name: name.to_string(),
        pos: pm.key_pos,
        loop_count: 1,
        properties: Properties::default(),
        events: Vec::new(),
    };
    let mut at = PropPos {
        object: pm.key_pos,
        ..PropPos::default()
    };
    for (key, m) in &members {
        match classify(key, Level::Phase) {
            Class::Loop => phase.loop_count = loop_count(cx, &m.value)?,
            Class::Prop(p) => set_prop(cx, &mut phase.properties, &mut at, p, key, m)?,
            Class::Event(prefix, t) => phase.events.push(parse_event(cx, key, m, prefix, t)?),
            Class::Instance | Class::Delay | Class::Phases => {
                return Err(cx.err(
                    m.key_pos,
                    format!("{key:?} is a task key; it is not allowed inside phase {name:?}"),
                ))
            }
            Class::Legacy(p) => {
                return Err(cx.err(
                    m.key_pos,
                    format!(
                        "legacy key {key:?} is only read at task level; write \"{}\" in a phase",
                        DL_KEYS[dl_index(p)]
                    ),
                ))
            }
            Class::Unknown => return Err(unknown_key(cx, m, key, Level::Phase)),
        }
    }
    if phase.events.is_empty() {
        return Err(cx.err(
            pm.key_pos,
            format!(
                "phase {name:?} has no events (rt-app: \"Task must have events or it's useless\")"
            ),
        ));
    }
    Ok((phase, at))
}

// ---------------------------------------------------------------------------------------------
// events

fn parse_event(cx: &mut Cx, key: &str, m: &Member, prefix: &str, t: EventType) -> R<Event> {
    let what = format!("{key:?}");
    let v = &m.value;
    let kind = match t {
        EventType::Run => EventKind::Run(micros(cx, v, &what)?),
        EventType::Runtime => EventKind::Runtime(micros(cx, v, &what)?),
        EventType::Sleep => EventKind::Sleep(micros(cx, v, &what)?),
        EventType::Timer => EventKind::Timer(parse_timer(cx, &what, v)?),
        EventType::Lock => EventKind::Lock(name(cx, v, &what)?),
        EventType::Unlock => EventKind::Unlock(name(cx, v, &what)?),
        EventType::Wait => {
            let (cond, mutex) = parse_wait(cx, &what, v)?;
            EventKind::Wait { cond, mutex }
        }
        EventType::Signal => EventKind::Signal(name(cx, v, &what)?),
        EventType::Broad => EventKind::Broad(name(cx, v, &what)?),
        EventType::Barrier => EventKind::Barrier(name(cx, v, &what)?),
        EventType::Suspend => {
            // rt-app requires a string; workgen fills in the thread's own name, so its value
            // never matters.
            string(cx, v, &what)?;
            EventKind::Suspend
        }
        EventType::Resume => {
            let target = name(cx, v, &what)?;
            cx.task_refs.push(("resume", target.clone(), v.pos));
            EventKind::Resume(target)
        }
        EventType::SemPost => EventKind::SemPost(name(cx, v, &what)?),
        EventType::SemWait => EventKind::SemWait(name(cx, v, &what)?),
        // rt-app never looks at the value, so neither do we.
        EventType::Yield => EventKind::Yield,
        EventType::Fork => {
            let target = name(cx, v, &what)?;
            cx.task_refs.push(("fork", target.clone(), v.pos));
            EventKind::Fork(target)
        }
        EventType::Sync | EventType::Mem | EventType::Memrun | EventType::Iorun => {
            return Err(cx.err(
                m.key_pos,
                format!("event {what} ({prefix}) is unsupported in this schedlab version"),
            ))
        }
    };
    Ok(Event {
        key: key.to_string(),
        pos: m.key_pos,
        kind,
    })
}

/// Stricter than rt-app, which defaults `ref` to "unknown" and `period` to 0 (a timer that is
/// always late): both are required here, and `period` must be positive.
fn parse_timer(cx: &mut Cx, what: &str, v: &Value) -> R<Timer> {
    let members = object(cx, v, what)?;
    let members = unique_members(cx, members, &format!("timer {what}"), |_| false)?;
    let (mut reference, mut period, mut mode) = (None, None, TimerMode::Relative);
    for (key, m) in members {
        let mwhat = format!("{what}.{key:?}");
        match key.as_str() {
            "ref" => reference = Some(name(cx, &m.value, &mwhat)?),
            "period" => {
                let us = micros(cx, &m.value, &mwhat)?;
                if us == 0 {
                    return Err(
                        cx.err(m.value.pos, format!("{mwhat}: the period must be positive"))
                    );
                }
                period = Some(us);
            }
            "mode" => {
                mode = match string(cx, &m.value, &mwhat)? {
                    "relative" => TimerMode::Relative,
                    "absolute" => TimerMode::Absolute,
                    s => {
                        return Err(cx.err(
                            m.value.pos,
                            format!("{mwhat}: expected \"relative\" or \"absolute\", found {s:?}"),
                        ))
                    }
                }
            }
            _ => {
                return Err(cx.err(
                    m.key_pos,
                    format!(
                    "unknown key {key:?} in timer {what} (expected \"ref\", \"period\", \"mode\")"
                ),
                ))
            }
        }
    }
    let reference =
        reference.ok_or_else(|| cx.err(v.pos, format!("timer {what} needs a \"ref\" name")))?;
    let period_us =
        period.ok_or_else(|| cx.err(v.pos, format!("timer {what} needs a \"period\" in µs")))?;
    Ok(Timer {
        unique: reference.starts_with("unique"),
        reference,
        period_us,
        mode,
    })
}

/// `{ "ref": cond, "mutex": m }`, both required (rt-app's "unknown" defaults would silently
/// share one condition between unrelated waits).
fn parse_wait(cx: &mut Cx, what: &str, v: &Value) -> R<(String, String)> {
    let members = object(cx, v, what)?;
    let members = unique_members(cx, members, &format!("wait {what}"), |_| false)?;
    let (mut cond, mut mutex) = (None, None);
    for (key, m) in members {
        let mwhat = format!("{what}.{key:?}");
        match key.as_str() {
            "ref" => cond = Some(name(cx, &m.value, &mwhat)?),
            "mutex" => mutex = Some(name(cx, &m.value, &mwhat)?),
            _ => {
                return Err(cx.err(
                    m.key_pos,
                    format!("unknown key {key:?} in wait {what} (expected \"ref\", \"mutex\")"),
                ))
            }
        }
    }
    let cond =
        cond.ok_or_else(|| cx.err(v.pos, format!("wait {what} needs a \"ref\" condition")))?;
    let mutex = mutex.ok_or_else(|| cx.err(v.pos, format!("wait {what} needs a \"mutex\"")))?;
    Ok((cond, mutex))
}

// ---------------------------------------------------------------------------------------------
// Validation that needs context.

/// Checks each properties object against the policy in force when it applies. As in rt-app's
/// `check_taskgroup_policy_dep()`, the policy and taskgroup in force are followed through the
/// phases in file order (a phase that names neither keeps the previous one's).
fn check_task_properties(
    cx: &mut Cx,
    task: &TaskDef,
    task_at: &PropPos,
    phase_at: &[PropPos],
    global: &Global,
) -> R<()> {
    let mut policy = task.start_policy(global);
    let mut policy_pos = task_at.policy;
    let mut taskgroup = task_at.taskgroup;
    // At thread start rt-app always applies a policy (the default one if none is named), so a
    // DEADLINE default needs the task's dl parameters.
    check_properties(cx, &task.properties, task_at, policy, true)?;
    check_taskgroup_policy(cx, policy, policy_pos, taskgroup)?;
    for (phase, at) in task.phases.iter().zip(phase_at) {
        if let Some(p) = phase.properties.policy {
            policy = p;
            policy_pos = at.policy;
        }
        if at.taskgroup.is_some() {
            taskgroup = at.taskgroup;
        }
        let names_policy = phase.properties.policy.is_some();
        check_properties(cx, &phase.properties, at, policy, names_policy)?;
        check_taskgroup_policy(cx, policy, policy_pos, taskgroup)?;
    }
    Ok(())
}

fn check_taskgroup_policy(
    cx: &Cx,
    policy: Policy,
    policy_pos: Option<Pos>,
    taskgroup: Option<Pos>,
) -> R<()> {
    let Some(tg_pos) = taskgroup else {
        return Ok(());
    };
    if policy.is_fair() {
        return Ok(());
    }
    // Point at whichever of the two came last: that is the one that broke the rule.
    let pos = policy_pos.map_or(tg_pos, |p| p.max(tg_pos));
    Err(cx.err(
        pos,
        format!(
            "taskgroup (set at {tg_pos}) with {policy}: rt-app supports taskgroups only for \
             SCHED_OTHER, SCHED_BATCH and SCHED_IDLE threads"
        ),
    ))
}

fn check_properties(
    cx: &mut Cx,
    props: &Properties,
    at: &PropPos,
    policy: Policy,
    applies_policy: bool,
) -> R<()> {
    if let (Some(prio), Some(pos)) = (props.priority, at.priority) {
        let ok = match policy {
            p if p.is_rt() => (1..=99).contains(&prio),
            p if p.is_fair() => (-20..=19).contains(&prio),
            _ => prio == 0,
        };
        if !ok {
            let range = match policy {
                p if p.is_rt() => "an RT priority 1..=99",
                p if p.is_fair() => "a nice value -20..=19",
                _ => "0 (the kernel rejects a priority with SCHED_DEADLINE)",
            };
            return Err(cx.err(
                pos,
                format!("\"priority\" {prio} with {policy}: expected {range}"),
            ));
        }
    }
    if let (Some(min), Some(max), Some(pos)) = (props.util_min, props.util_max, at.util_max) {
        if min > max {
            return Err(cx.err(
                pos,
                format!(
                    "util_min {min} is above util_max {max} (sched_setattr would fail with EINVAL)"
                ),
            ));
        }
    }
    let has_dl = at.dl.iter().any(Option::is_some);
    match policy {
        Policy::Deadline if applies_policy || has_dl => check_deadline(cx, props, at)?,
        p if p.is_fair() => {
            if let (Some(us), Some(pos)) = (props.dl_runtime_us, at.dl[0]) {
                if us != 0 && !(FAIR_SLICE_MIN_US..=FAIR_SLICE_MAX_US).contains(&us) {
                    cx.warn(
                        pos,
                        format!(
                            "custom slice {us} µs with {p}: the kernel clamps slices to \
                             {FAIR_SLICE_MIN_US}..={FAIR_SLICE_MAX_US} µs"
                        ),
                    );
                }
            }
        }
        p if p.is_rt() => {
            if let Some(pos) = at.dl.iter().flatten().next() {
                cx.warn(
                    *pos,
                    format!("dl-runtime/dl-period/dl-deadline have no effect with {p}"),
                );
            }
        }
        _ => {}
    }
    Ok(())
}

/// The kernel's `sched_setattr` rules for SCHED_DEADLINE (rt-dl.md §3.1,
/// `schedlab_sched::deadline::checkparam_dl`), with rt-app's defaults (dl-period =
/// dl-runtime, dl-deadline = dl-period) filled in.
fn check_deadline(cx: &mut Cx, props: &Properties, at: &PropPos) -> R<()> {
    let runtime_pos = at.dl[0].unwrap_or(at.object);
    let runtime = match props.dl_runtime_us {
        Some(r) if r > 0 => r,
        _ => {
            return Err(cx.err(
                runtime_pos,
                "SCHED_DEADLINE needs a positive \"dl-runtime\" (µs)",
            ))
        }
    };
    let attr = dl_attr(props).expect("dl-runtime is set");
    if let Err(m) = schedlab_sched::deadline::checkparam_dl(&attr) {
        let period = props.dl_period_us.unwrap_or(runtime);
        let deadline = props.dl_deadline_us.unwrap_or(period);
        let pos = if attr.runtime < 1024 {
            runtime_pos
        } else {
            at.dl[2].or(at.dl[1]).unwrap_or(runtime_pos)
        };
        return Err(cx.err(
            pos,
            format!(
                "SCHED_DEADLINE dl-runtime / dl-deadline / dl-period {runtime} / {deadline} / \
                 {period} µs: sched_setattr refuses it: {m}"
            ),
        ));
    }
    Ok(())
}

/// A task's or phase's `sched_attr` for SCHED_DEADLINE in ns, with rt-app's defaults
/// (rt-app `parse_thread_data`: dl-period defaults to dl-runtime, dl-deadline to dl-period);
/// None without a dl-runtime.
pub(crate) fn dl_attr(props: &Properties) -> Option<schedlab_sched::DlAttr> {
    let runtime = props.dl_runtime_us?;
    let period = props.dl_period_us.unwrap_or(runtime);
    let deadline = props.dl_deadline_us.unwrap_or(period);
    Some(schedlab_sched::DlAttr {
        runtime: runtime.saturating_mul(1000),
        deadline: deadline.saturating_mul(1000),
        period: period.saturating_mul(1000),
        sched_flags: 0,
    })
}

fn check_taskgroup_count(cx: &Cx, tasks: &[TaskDef]) -> R<()> {
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    for task in tasks {
        let all = std::iter::once((&task.properties, task.pos))
            .chain(task.phases.iter().map(|p| (&p.properties, p.pos)));
        for (props, pos) in all {
            if let Some(tg) = &props.taskgroup {
                seen.insert(tg);
                if seen.len() > MAX_TASKGROUPS {
                    return Err(cx.err(
                        pos,
                        format!("more than {MAX_TASKGROUPS} distinct taskgroups (rt-app's limit)"),
                    ));
                }
            }
        }
    }
    Ok(())
}

fn check_task_refs(cx: &mut Cx, tasks: &[TaskDef]) -> R<()> {
    for (what, target, pos) in &cx.task_refs {
        if !tasks.iter().any(|t| &t.name == target) {
            return Err(cx.err(*pos, format!("{what} of unknown task {target:?}")));
        }
    }
    let forked: BTreeSet<&str> = tasks
        .iter()
        .flat_map(|t| t.events())
        .filter_map(|e| match &e.kind {
            EventKind::Fork(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    for task in tasks {
        if task.instance == 0 && !forked.contains(task.name.as_str()) {
            cx.warn(
                task.pos,
                format!(
                    "task {:?} has instance 0 and no fork creates it: it never runs",
                    task.name
                ),
            );
        }
    }
    Ok(())
}

/// Mutex discipline over one pass of the task's events in file order. rt-app maps `lock`,
/// `unlock` and `wait` straight onto pthread calls on default (or PI) mutexes, where relocking
/// a held mutex deadlocks and `pthread_cond_wait` without owning the mutex is undefined; the
/// simulator cannot model either, so both are errors. An unlock of a mutex not held here may
/// be deliberate across loop iterations, so it only warns.
fn check_mutexes(cx: &mut Cx, task: &TaskDef) -> R<()> {
    let mut held: Vec<(&str, Pos)> = Vec::new();
    fn is_held(held: &[(&str, Pos)], m: &str) -> Option<usize> {
        held.iter().position(|(h, _)| *h == m)
    }
    for phase in &task.phases {
        let held_at_start = held.len();
        for ev in &phase.events {
            match &ev.kind {
                EventKind::Lock(m) => {
                    if let Some(i) = is_held(&held, m) {
                        return Err(cx.err(
                            ev.pos,
                            format!(
                                "task {:?} locks mutex {m:?} while already holding it (locked at \
                                 {}): the thread would deadlock",
                                task.name, held[i].1
                            ),
                        ));
                    }
                    held.push((m.as_str(), ev.pos));
                }
                EventKind::Unlock(m) => match is_held(&held, m) {
                    Some(i) => {
                        held.remove(i);
                    }
                    None => cx.warn(
                        ev.pos,
                        format!(
                            "task {:?} unlocks mutex {m:?} without holding it at this point",
                            task.name
                        ),
                    ),
                },
                EventKind::Wait { cond, mutex } if is_held(&held, mutex).is_none() => {
                    return Err(cx.err(
                        ev.pos,
                        format!(
                            "wait on {cond:?} with mutex {mutex:?}, but task {:?} does not \
                             hold {mutex:?} here: \"lock\" it earlier (pthread_cond_wait \
                             needs the caller to own the mutex)",
                            task.name
                        ),
                    ));
                }
                _ => {}
            }
        }
        // A mutex locked in a repeating phase and still held at its end is locked again by
        // the next iteration.
        if phase.loop_count != 1 {
            if let Some((m, pos)) = held.get(held_at_start) {
                return Err(cx.err(
                    *pos,
                    format!(
                        "mutex {m:?} is still held when phase {:?} repeats: its next iteration \
                         would deadlock on this lock",
                        phase.name
                    ),
                ));
            }
        }
    }
    if let Some((m, pos)) = held.first() {
        cx.warn(
            *pos,
            format!(
                "task {:?} still holds mutex {m:?} at the end of its events",
                task.name
            ),
        );
    }
    Ok(())
}

/// Warnings for names that cannot work as written: a waiter nobody wakes, a barrier with one
/// user, a shared timer whose users disagree on the mode.
fn warn_unmatched(cx: &mut Cx, tasks: &[TaskDef]) {
    let mut posted = BTreeSet::new();
    let mut signalled = BTreeSet::new();
    let mut resumed = BTreeSet::new();
    let mut forked = BTreeSet::new();
    let mut barrier_users: BTreeMap<&str, u64> = BTreeMap::new();
    for task in tasks {
        let mut barriers_here = BTreeSet::new();
        for ev in task.events() {
            match &ev.kind {
                EventKind::SemPost(s) => {
                    posted.insert(s.as_str());
                }
                EventKind::Signal(c) | EventKind::Broad(c) => {
                    signalled.insert(c.as_str());
                }
                EventKind::Resume(t) => {
                    resumed.insert(t.as_str());
                }
                EventKind::Fork(t) => {
                    forked.insert(t.as_str());
                }
                EventKind::Barrier(b) => {
                    barriers_here.insert(b.as_str());
                }
                _ => {}
            }
        }
        // Spec §10.4: users = Σ instances of the tasks that reference the name.
        for b in barriers_here {
            *barrier_users.entry(b).or_default() += u64::from(task.instance);
        }
    }

    let mut timer_modes: BTreeMap<(Option<&str>, &str), (TimerMode, Pos)> = BTreeMap::new();
    let mut warned_barriers = BTreeSet::new();
    for task in tasks {
        let mut suspends = false;
        for ev in task.events() {
            match &ev.kind {
                EventKind::SemWait(s) if !posted.contains(s.as_str()) => cx.warn(
                    ev.pos,
                    format!("sem_wait on {s:?}, which no task posts: the thread blocks forever"),
                ),
                EventKind::Wait { cond, .. } if !signalled.contains(cond.as_str()) => cx.warn(
                    ev.pos,
                    format!("wait on {cond:?}, which no task signals or broadcasts"),
                ),
                EventKind::Suspend => suspends = true,
                EventKind::Barrier(b) => {
                    let users = barrier_users.get(b.as_str()).copied().unwrap_or(0);
                    if users <= 1 && warned_barriers.insert(b.as_str()) {
                        cx.warn(
                            ev.pos,
                            format!("barrier {b:?} has {users} user thread(s): it never waits"),
                        );
                    }
                    if forked.contains(task.name.as_str()) {
                        cx.warn(
                            ev.pos,
                            format!(
                                "barrier {b:?} in task {:?}, which is forked: rt-app counts \
                                 barrier users at start, so forked threads are not counted",
                                task.name
                            ),
                        );
                    }
                }
                EventKind::Timer(t) => {
                    let owner = t.unique.then_some(task.name.as_str());
                    let key = (owner, t.reference.as_str());
                    match timer_modes.get(&key) {
                        None => {
                            timer_modes.insert(key, (t.mode, ev.pos));
                        }
                        Some(&(mode, first)) if mode != t.mode => cx.warn(
                            ev.pos,
                            format!(
                                "timer {:?} is {} here but {} at {first}; rt-app makes the \
                                 timer absolute for all its users if any user says so",
                                t.reference,
                                t.mode.as_str(),
                                mode.as_str()
                            ),
                        ),
                        Some(_) => {}
                    }
                }
                _ => {}
            }
        }
        if suspends && !resumed.contains(task.name.as_str()) {
            cx.warn(
                task.pos,
                format!("task {:?} suspends but no task resumes it", task.name),
            );
        }
        if resumed.contains(task.name.as_str()) && !suspends {
            cx.warn(
                task.pos,
                format!(
                    "task {:?} is resumed but never suspends: the resumes are lost",
                    task.name
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const F: &str = "test.json";

    fn ok(text: &str) -> RtAppFile {
        match parse_file(text, F) {
            Ok(f) => f,
            Err(e) => panic!("unexpected error: {e}"),
        }
    }

    /// Asserts that `text` is rejected at line:column with a message containing `needle`.
    #[track_caller]
    fn assert_fail(text: &str, line: u32, column: u32, needle: &str) {
        match parse_file(text, F) {
            Ok(_) => panic!("expected an error containing {needle:?}"),
            Err(RtAppError::Invalid { file, pos, message }) => {
                assert_eq!(file, F);
                assert_eq!((pos.line, pos.column), (line, column), "message: {message}");
                assert!(message.contains(needle), "{message:?} lacks {needle:?}");
                assert!(!message.contains('\n'), "multi-line message {message:?}");
            }
            Err(e) => panic!("unexpected {e}"),
        }
    }

    /// A file with one task "t" whose members are `body`. The task key is at 3:5 and the body
    /// starts on line 4; the tests indent body lines by six spaces, so a key there is at column
    /// 7 and the value of key `k` at column 7 + len("\"k\": ") = 11 + len(k).
    fn one_task(body: &str) -> String {
        format!("{{\n  \"tasks\": {{\n    \"t\": {{\n{body}\n    }}\n  }}\n}}\n")
    }

    fn kinds(task: &TaskDef) -> Vec<EventKind> {
        task.events().map(|e| e.kind.clone()).collect()
    }

    fn has_warning(f: &RtAppFile, line: u32, needle: &str) -> bool {
        f.warnings
            .iter()
            .any(|w| w.pos.line == line && w.message.contains(needle))
    }

    // -----------------------------------------------------------------------------------------
    // Accepted input

    #[test]
    fn comments_and_key_order() {
        let f = ok(r#"// leading comment
{
  /* global first */ "global": { "duration": 5 }, // trailing
  "tasks": {
    "b": { "sleep": 1, "run": 2, /* mid */ "lock": "m", "unlock": "m" },
    "a": { "run": 3 }
  }
}"#);
        assert_eq!(f.global.duration_s, Some(5));
        let names: Vec<&str> = f.tasks.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["b", "a"]);
        assert_eq!(
            kinds(&f.tasks[0]),
            vec![
                EventKind::Sleep(1),
                EventKind::Run(2),
                EventKind::Lock("m".into()),
                EventKind::Unlock("m".into())
            ]
        );
        // `"b"` is at column 5 of line 5, its `"run"` key at column 24.
        assert_eq!(f.tasks[0].pos, Pos { line: 5, column: 5 });
        assert_eq!(
            f.tasks[0].phases[0].events[1].pos,
            Pos {
                line: 5,
                column: 24
            }
        );
        assert!(f.warnings.is_empty(), "{:?}", f.warnings);
    }

    #[test]
    fn defaults() {
        let f = ok(r#"{ "tasks": { "t": { "run": 10 } } }"#);
        // §10.2: duration -1, calibration "CPU0", default_policy SCHED_OTHER, pi_enabled false.
        assert_eq!(
            f.global,
            Global {
                duration_s: None,
                calibration: Calibration::Cpu(0),
                default_policy: Policy::Other,
                pi_enabled: false
            }
        );
        let t = &f.tasks[0];
        // §10.3: instance 1, loop -1; no delay.
        assert_eq!((t.instance, t.delay_us, t.loop_count), (1, 0, -1));
        assert!(t.properties.is_empty());
        assert_eq!(t.start_policy(&f.global), Policy::Other);
        // Without "phases" the task is its own single phase, named after it.
        assert_eq!(t.phases.len(), 1);
        let p = &t.phases[0];
        assert_eq!((p.name.as_str(), p.loop_count, p.pos), ("t", 1, t.pos));
        assert!(p.properties.is_empty());
        assert_eq!(kinds(t), vec![EventKind::Run(10)]);
        assert!(f.warnings.is_empty());
    }

    #[test]
    fn defaults_with_phases_and_timer() {
        let f = ok(r#"{ "tasks": { "t": { "phases": {
            "p1": { "run": 1, "timer": { "ref": "tick", "period": 100 } },
            "p2": { "loop": 3, "sleep": 2 } } } } }"#);
        let t = &f.tasks[0];
        assert_eq!(t.loop_count, -1);
        assert_eq!(t.phases[0].loop_count, 1); // §10.3: phase loop default 1
        assert_eq!(t.phases[1].loop_count, 3);
        let EventKind::Timer(timer) = &t.phases[0].events[1].kind else {
            panic!()
        };
        assert_eq!(
            *timer,
            Timer {
                reference: "tick".into(),
                period_us: 100,
                mode: TimerMode::Relative, // §10.4: relative is the default
                unique: false
            }
        );
    }

    #[test]
    fn phase_less_task_loop_belongs_to_the_task() {
        let f = ok(&one_task("      \"loop\": 5,\n      \"run\": 1"));
        assert_eq!(f.tasks[0].loop_count, 5);
        assert_eq!(f.tasks[0].phases[0].loop_count, 1);
    }

    #[test]
    fn task_keys() {
        let f = ok(&one_task(
            "      \"instance\": 3,\n      \"delay\": 250,\n      \"loop\": 7,\n      \"run\": 1",
        ));
        let t = &f.tasks[0];
        assert_eq!((t.instance, t.delay_us, t.loop_count), (3, 250, 7));
    }

    #[test]
    fn global_keys() {
        let f = ok(r#"{
  "global": {
    "duration": 30,
    "calibration": "CPU4",
    "default_policy": "SCHED_BATCH",
    "pi_enabled": true,
    "logdir": "./",
    "log_basename": "x",
    "log_size": "file",
    "ftrace": "main,task",
    "gnuplot": false,
    "lock_pages": true,
    "io_device": "/dev/null",
    "mem_buffer_size": 4194304,
    "cumulative_slack": false
  },
  "tasks": { "t": { "run": 1 } }
}"#);
        assert_eq!(
            f.global,
            Global {
                duration_s: Some(30),
                calibration: Calibration::Cpu(4),
                default_policy: Policy::Batch,
                pi_enabled: true
            }
        );
        // One "ignored" warning per logging key, on lines 7..=15, in file order.
        let lines: Vec<u32> = f.warnings.iter().map(|w| w.pos.line).collect();
        assert_eq!(lines, (7..=15).collect::<Vec<u32>>());
        assert!(f.warnings[0]
            .message
            .contains("\"logdir\" is accepted and ignored"));
        assert_eq!(f.tasks[0].start_policy(&f.global), Policy::Batch);

        let f = ok(
            r#"{ "global": { "calibration": 250, "log_size": 4, "ftrace": true },
                        "tasks": { "t": { "run": 1 } } }"#,
        );
        assert_eq!(f.global.calibration, Calibration::NsPerLoop(250));
    }

    #[test]
    fn every_event_type_by_prefix() {
        let f = ok(r#"{ "tasks": {
  "t": {
    "lock_a": "m",
    "waitC": { "ref": "c", "mutex": "m" },
    "unlock_a": "m",
    "signal1": "c",
    "broadcast": "c",
    "sleep_x": 10,
    "runtime0": 20,
    "run_long": 30,
    "timer0": { "ref": "unique_t", "period": 1000, "mode": "absolute" },
    "suspend0": "",
    "resume0": "t",
    "yield0": "",
    "barrier_1": "b",
    "fork_child": "child",
    "sem_post_a": "s",
    "sem_wait_a": "s"
  },
  "child": { "instance": 0, "run": 1 }
} }"#);
        let t = &f.tasks[0];
        assert_eq!(
            kinds(t),
            vec![
                EventKind::Lock("m".into()),
                EventKind::Wait {
                    cond: "c".into(),
                    mutex: "m".into()
                },
                EventKind::Unlock("m".into()),
                EventKind::Signal("c".into()),
                EventKind::Broad("c".into()),
                EventKind::Sleep(10),
                EventKind::Runtime(20),
                EventKind::Run(30),
                EventKind::Timer(Timer {
                    reference: "unique_t".into(),
                    period_us: 1000,
                    mode: TimerMode::Absolute,
                    unique: true
                }),
                EventKind::Suspend,
                EventKind::Resume("t".into()),
                EventKind::Yield,
                EventKind::Barrier("b".into()),
                EventKind::Fork("child".into()),
                EventKind::SemPost("s".into()),
                EventKind::SemWait("s".into()),
            ]
        );
        let keys: Vec<&str> = t.events().map(|e| e.key.as_str()).collect();
        assert_eq!(keys[..3], ["lock_a", "waitC", "unlock_a"]);
        // One event per line from line 3, keys at column 5.
        for (i, e) in t.events().enumerate() {
            assert_eq!(
                e.pos,
                Pos {
                    line: 3 + i as u32,
                    column: 5
                }
            );
        }
        // A barrier with a single user never waits; "child" is forked, so no warning for it.
        assert!(has_warning(&f, 15, "has 1 user"));
        assert_eq!(f.warnings.len(), 1, "{:?}", f.warnings);
    }

    #[test]
    fn runtime_is_tested_before_run_and_memrun_before_mem() {
        assert_eq!(
            event_type("runtime5"),
            Some(("runtime", EventType::Runtime))
        );
        assert_eq!(event_type("run5"), Some(("run", EventType::Run)));
        assert_eq!(event_type("memrun"), Some(("memrun", EventType::Memrun)));
        assert_eq!(event_type("mem1"), Some(("mem", EventType::Mem)));
        assert_eq!(event_type("unlock"), Some(("unlock", EventType::Unlock)));
        assert_eq!(event_type("period"), None);
    }

    #[test]
    fn every_property_at_task_and_phase_level() {
        let f = ok(r#"{ "tasks": { "t": {
  "policy": "SCHED_FIFO",
  "priority": 50,
  "cpus": [1, 3],
  "util_min": 100,
  "util_max": 900,
  "nodes_membind": [0],
  "phases": {
    "p": {
      "policy": "SCHED_OTHER",
      "priority": -5,
      "taskgroup": "/g",
      "dl-runtime": 3000,
      "dl-period": 4000,
      "dl-deadline": 3500,
      "cpus": [0],
      "util_min": 0,
      "util_max": 1024,
      "nodes_membind": [1],
      "run": 1
    }
  }
} } }"#);
        let t = &f.tasks[0];
        assert_eq!(
            t.properties,
            Properties {
                policy: Some(Policy::Fifo),
                priority: Some(50),
                cpus: Some(vec![1, 3]),
                util_min: Some(100),
                util_max: Some(900),
                nodes_membind: Some(vec![0]),
                ..Properties::default()
            }
        );
        assert_eq!(
            t.phases[0].properties,
            Properties {
                policy: Some(Policy::Other),
                priority: Some(-5),
                dl_runtime_us: Some(3000),
                dl_period_us: Some(4000),
                dl_deadline_us: Some(3500),
                cpus: Some(vec![0]),
                taskgroup: Some("/g".into()),
                util_min: Some(0),
                util_max: Some(1024),
                nodes_membind: Some(vec![1]),
            }
        );
        // nodes_membind is recorded with a warning each time.
        assert!(has_warning(&f, 7, "nodes_membind"));
        assert!(has_warning(&f, 19, "nodes_membind"));
        assert_eq!(f.warnings.len(), 2, "{:?}", f.warnings);
    }

    #[test]
    fn rtapp_sentinels_read_as_unset() {
        let f = ok(&one_task(
            "      \"taskgroup\": \"\",\n      \"util_min\": -1,\n      \"util_max\": -1,\n      \"run\": 1",
        ));
        assert!(f.tasks[0].properties.is_empty());
    }

    #[test]
    fn legacy_dl_aliases_at_task_level() {
        let f = ok(r#"{ "tasks": { "t": {
  "policy": "SCHED_DEADLINE",
  "runtime": 1000,
  "period": 5000,
  "deadline": 4000,
  "phases": { "p": { "run": 1 } }
} } }"#);
        let p = &f.tasks[0].properties;
        assert_eq!(
            (p.dl_runtime_us, p.dl_period_us, p.dl_deadline_us),
            (Some(1000), Some(5000), Some(4000))
        );
        assert!(f.warnings.is_empty(), "{:?}", f.warnings);
    }

    #[test]
    fn runtime_in_a_phase_less_task_is_the_event() {
        let f = ok(&one_task(
            "      \"period\": 5000,\n      \"runtime\": 300,\n      \"run\": 1",
        ));
        let t = &f.tasks[0];
        assert_eq!(t.properties.dl_period_us, Some(5000));
        assert_eq!(t.properties.dl_runtime_us, None);
        assert_eq!(kinds(t), vec![EventKind::Runtime(300), EventKind::Run(1)]);
        assert!(has_warning(&f, 5, "legacy dl-runtime alias"));
        // With dl-runtime given, rt-app would not read "runtime" as the alias: no warning.
        let f = ok(&one_task(
            "      \"dl-runtime\": 5000,\n      \"runtime\": 300",
        ));
        assert!(f.warnings.is_empty(), "{:?}", f.warnings);
    }

    #[test]
    fn duplicate_keys_are_renamed() {
        let f = ok(&one_task(
            "      \"run\": 1,\n      \"run\": 2,\n      \"run1\": 3,\n      \"run\": 4",
        ));
        let t = &f.tasks[0];
        // "run1" is written in the object, so the first duplicate takes "run2"; the second
        // finds run1 and run2 taken and takes "run3".
        let keys: Vec<&str> = t.events().map(|e| e.key.as_str()).collect();
        assert_eq!(keys, ["run", "run2", "run1", "run3"]);
        assert_eq!(
            kinds(t),
            vec![
                EventKind::Run(1),
                EventKind::Run(2),
                EventKind::Run(3),
                EventKind::Run(4)
            ]
        );
        assert_eq!(f.warnings.len(), 2);
        assert_eq!(f.warnings[0].pos, Pos { line: 5, column: 7 });
        assert!(f.warnings[0].message.contains("renamed to \"run2\""));
        assert!(f.warnings[0].message.contains("first at 4:7"));
        assert_eq!(f.warnings[1].pos, Pos { line: 7, column: 7 });
        assert!(f.warnings[1].message.contains("renamed to \"run3\""));
    }

    #[test]
    fn duplicate_task_and_phase_names_are_renamed() {
        let f = ok(r#"{ "tasks": {
  "a": { "run": 1 },
  "a": { "phases": { "p": { "run": 2 }, "p": { "run": 3 } } }
} }"#);
        let names: Vec<&str> = f.tasks.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["a", "a1"]);
        let phases: Vec<&str> = f.tasks[1].phases.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(phases, ["p", "p1"]);
        assert_eq!(f.warnings.len(), 2);
    }

    #[test]
    fn resources_object_is_ignored_with_a_warning() {
        let f =
            ok(r#"{ "resources": { "m": { "type": "mutex" } }, "tasks": { "t": { "run": 1 } } }"#);
        assert!(has_warning(&f, 1, "\"resources\" is accepted and ignored"));
    }

    // -----------------------------------------------------------------------------------------
    // Warnings

    #[test]
    fn advisory_warnings() {
        let f = ok(r#"{ "tasks": {
  "a": {
    "dl-runtime": 50,
    "unlock": "m",
    "sem_wait": "never_posted",
    "suspend": "",
    "timer": { "ref": "shared", "period": 1000 }
  },
  "b": {
    "policy": "SCHED_FIFO",
    "dl-runtime": 1000,
    "timer": { "ref": "shared", "period": 1000, "mode": "absolute" }
  },
  "c": { "instance": 0, "run": 1 }
} }"#);
        assert!(has_warning(&f, 3, "the kernel clamps slices"));
        assert!(has_warning(&f, 4, "without holding it"));
        assert!(has_warning(&f, 5, "no task posts"));
        assert!(has_warning(&f, 2, "suspends but no task resumes it"));
        assert!(has_warning(&f, 11, "no effect with SCHED_FIFO"));
        assert!(has_warning(&f, 12, "is absolute here but relative at 7:5"));
        assert!(has_warning(&f, 14, "never runs"));
        assert_eq!(f.warnings.len(), 7, "{:?}", f.warnings);
    }

    // -----------------------------------------------------------------------------------------
    // Errors: structure

    #[test]
    fn syntax_errors_name_the_file() {
        let e = parse_file("{\"tasks\": {\"t\": {\"run\": 1,}}}", F).unwrap_err();
        // The comma after 1 is the 26th character.
        assert_eq!(
            e.to_string(),
            "test.json:1:26: trailing comma before '}' is not allowed"
        );
    }

    #[test]
    fn top_level_errors() {
        assert_fail("[1]", 1, 1, "one JSON object");
        assert_fail("{ \"global\": {} }", 1, 1, "missing \"tasks\"");
        assert_fail("// c\n{ \"global\": {} }", 2, 1, "missing \"tasks\"");
        assert_fail(
            "{ \"tasks\": [] }",
            1,
            12,
            "\"tasks\": expected an object, found an array",
        );
        assert_fail("{ \"tasks\": {} }", 1, 12, "empty");
        assert_fail("{ \"task\": {} }", 1, 3, "unknown top-level key");
        assert_fail(
            "{ \"global\": 1, \"tasks\": {} }",
            1,
            13,
            "expected an object",
        );
        assert_fail("{ \"tasks\": { \"t\": 5 } }", 1, 19, "expected an object");
        assert_fail(
            "{ \"tasks\": { \"t\": { \"run\": 1 } },\n  \"tasks\": {} }",
            2,
            3,
            "duplicate key \"tasks\"",
        );
    }

    #[test]
    fn times_and_counts_are_capped() {
        // `{ "global": { ` puts the first global key at column 15; "duration" value at 27.
        let g = |members: &str| {
            format!("{{ \"global\": {{ {members} }}, \"tasks\": {{ \"t\": {{ \"run\": 1 }} }} }}")
        };
        // 2^33 s = 8589934592 s is the cap; 18446744073 s (the issue's input) is over it.
        assert!(parse_file(&g("\"duration\": 8589934592"), F).is_ok());
        assert_fail(&g("\"duration\": 8589934593"), 1, 27, "8589934592 s");
        assert_fail(&g("\"duration\": 18446744073"), 1, 27, "2^33 s");
        // µs values: 2^33 s = 8589934592000000 µs; value of "run" at 4:14.
        assert!(parse_file(&one_task("      \"run\": 8589934592000000"), F).is_ok());
        assert_fail(
            &one_task("      \"run\": 9223372036854775807"),
            4,
            14,
            "8589934592000000 µs",
        );
        assert_fail(
            &one_task("      \"sleep\": 8589934592000001"),
            4,
            16,
            "2^33 s",
        );
        assert_fail(
            &one_task("      \"delay\": 8589934592000001"),
            4,
            16,
            "2^33 s",
        );
        // "instance": at most 32768 threads (the default pid_max), also in total.
        assert_fail(
            &one_task("      \"instance\": 4294967295,\n      \"run\": 1"),
            4,
            19,
            "32768",
        );
        let two = "{ \"tasks\": { \"a\": { \"instance\": 20000, \"run\": 1 }, \
                   \"b\": { \"instance\": 20000, \"run\": 1 } } }";
        assert_fail(two, 1, 12, "40000 threads");
    }

    #[test]
    fn cpu_numbers_are_capped() {
        // Campaign input: "cpus": [4294967295] allocated a 512 MiB mask before the check
        // against the machine. CPULIST_MAX_CPU = 8191 is the largest CPU a list may name.
        assert_fail(
            &one_task("      \"cpus\": [4294967295],\n      \"run\": 1"),
            4,
            15,
            "CPU 4294967295 is above 8191",
        );
        assert!(parse_file(&one_task("      \"cpus\": [8191],\n      \"run\": 1"), F).is_ok());
    }

    #[test]
    fn global_errors() {
        // `{ "global": { ` puts the first global key at column 15.
        let g = |members: &str| {
            format!("{{ \"global\": {{ {members} }}, \"tasks\": {{ \"t\": {{ \"run\": 1 }} }} }}")
        };
        assert_fail(
            &g("\"durations\": 1"),
            1,
            15,
            "unknown key \"durations\" in \"global\"",
        );
        assert_fail(
            &g("\"duration\": 0"),
            1,
            27,
            "-1 (until every thread finishes)",
        );
        assert_fail(&g("\"duration\": -2"), 1, 27, "found -2");
        assert_fail(&g("\"calibration\": \"CPU\""), 1, 30, "\"CPU<n>\"");
        assert_fail(&g("\"calibration\": \"cpu1\""), 1, 30, "\"CPU<n>\"");
        assert_fail(&g("\"calibration\": 2.5"), 1, 30, "found 2.5");
        assert_fail(&g("\"calibration\": 0"), 1, 30, "found 0");
        assert_fail(
            &g("\"default_policy\": \"SCHED_NORMAL\""),
            1,
            33,
            "unknown policy",
        );
        assert_fail(&g("\"pi_enabled\": 1"), 1, 29, "expected true or false");
        assert_fail(&g("\"log_size\": \"big\""), 1, 27, "\"file\"");
        assert_fail(&g("\"gnuplot\": \"yes\""), 1, 26, "expected true or false");
    }

    #[test]
    fn task_structure_errors() {
        assert_fail(
            &one_task("      \"bogus\": 1"),
            4,
            7,
            "unknown task key \"bogus\"",
        );
        assert_fail(
            &one_task("      \"loop\": 3"),
            3,
            5,
            "task \"t\" has no events",
        );
        assert_fail(
            &one_task("      \"phases\": {}"),
            4,
            17,
            "\"phases\" is empty",
        );
        assert_fail(
            &one_task("      \"phases\": []"),
            4,
            17,
            "expected an object",
        );
        assert_fail(
            &one_task("      \"loop\": 0,\n      \"run\": 1"),
            4,
            15,
            "-1 (forever)",
        );
        assert_fail(
            &one_task("      \"loop\": 2.0,\n      \"run\": 1"),
            4,
            15,
            "found 2",
        );
        assert_fail(
            &one_task("      \"instance\": -1,\n      \"run\": 1"),
            4,
            19,
            "found -1",
        );
        assert_fail(
            &one_task("      \"delay\": -1,\n      \"run\": 1"),
            4,
            16,
            "found -1",
        );
        assert_fail(
            &one_task("      \"phases\": { \"p\": { \"run\": 1 } },\n      \"sleep\": 5"),
            5,
            7,
            "event key \"sleep\" at task level",
        );
        assert_fail(
            &one_task("      \"policy\": \"SCHED_OTHER\",\n      \"policy\": \"SCHED_BATCH\",\n      \"run\": 1"),
            5,
            7,
            "duplicate key \"policy\" in task \"t\" (first at 4:7)",
        );
        assert_fail(
            &one_task("      \"dl-period\": 10,\n      \"period\": 10,\n      \"run\": 1"),
            5,
            7,
            "either \"dl-period\" or its legacy alias",
        );
    }

    #[test]
    fn phase_structure_errors() {
        // Phase bodies on their own lines: `        "k": ...` puts keys at column 9.
        let phase = |body: &str| {
            one_task(&format!(
                "      \"phases\": {{\n        \"p\": {{\n{body}\n        }}\n      }}"
            ))
        };
        // The phase key "p" is at 5:9; phase members start on line 6 at column 11.
        assert_fail(
            &phase("          \"loop\": 1"),
            5,
            9,
            "phase \"p\" has no events",
        );
        assert_fail(
            &phase("          \"instance\": 2,\n          \"run\": 1"),
            6,
            11,
            "task key",
        );
        assert_fail(
            &phase("          \"period\": 2,\n          \"run\": 1"),
            6,
            11,
            "only read at task level",
        );
        assert_fail(
            &phase("          \"bogus\": 2,\n          \"run\": 1"),
            6,
            11,
            "unknown phase key",
        );
        assert_fail(
            &phase("          \"loop\": -2,\n          \"run\": 1"),
            6,
            19,
            "found -2",
        );
    }

    // -----------------------------------------------------------------------------------------
    // Errors: event values

    #[test]
    fn event_value_errors() {
        assert_fail(
            &one_task("      \"run\": \"x\""),
            4,
            14,
            "expected a non-negative integer number of microseconds, found a string",
        );
        assert_fail(&one_task("      \"run\": 1.5"), 4, 14, "found 1.5");
        assert_fail(&one_task("      \"sleep\": -3"), 4, 16, "found -3");
        assert_fail(&one_task("      \"runtime2\": null"), 4, 19, "found null");
        assert_fail(
            &one_task("      \"lock\": \"\""),
            4,
            15,
            "must not be empty",
        );
        assert_fail(&one_task("      \"signal\": 3"), 4, 17, "expected a string");
        assert_fail(
            &one_task("      \"suspend\": 0"),
            4,
            18,
            "expected a string",
        );
        assert_fail(
            &one_task("      \"barrier\": [\"b\"]"),
            4,
            18,
            "expected a string",
        );
    }

    #[test]
    fn timer_and_wait_errors() {
        assert_fail(&one_task("      \"timer\": 5"), 4, 16, "expected an object");
        assert_fail(
            &one_task("      \"timer\": { \"ref\": \"x\" }"),
            4,
            16,
            "needs a \"period\"",
        );
        assert_fail(
            &one_task("      \"timer\": { \"period\": 5 }"),
            4,
            16,
            "needs a \"ref\"",
        );
        assert_fail(
            &one_task("      \"timer\": { \"ref\": \"x\", \"period\": 0 }"),
            4,
            40,
            "must be positive",
        );
        assert_fail(
            &one_task("      \"timer\": { \"ref\": \"x\", \"period\": 5, \"mode\": \"abs\" }"),
            4,
            51,
            "expected \"relative\" or \"absolute\"",
        );
        assert_fail(
            &one_task("      \"timer\": { \"ref\": \"x\", \"period\": 5, \"phase\": 1 }"),
            4,
            43,
            "unknown key \"phase\" in timer",
        );
        assert_fail(
            &one_task("      \"lock\": \"m\",\n      \"wait\": { \"ref\": \"c\" }"),
            5,
            15,
            "needs a \"mutex\"",
        );
        assert_fail(
            &one_task("      \"lock\": \"m\",\n      \"wait\": { \"mutex\": \"m\" }"),
            5,
            15,
            "needs a \"ref\"",
        );
    }

    #[test]
    fn deferred_events_are_unsupported() {
        assert_fail(
            &one_task("      \"run\": 1,\n      \"mem\": 10"),
            5,
            7,
            "event \"mem\" (mem) is unsupported in this schedlab version",
        );
        assert_fail(
            &one_task("      \"iorun0\": 10"),
            4,
            7,
            "(iorun) is unsupported",
        );
        assert_fail(
            &one_task("      \"memrun\": { \"type\": \"read\" }"),
            4,
            7,
            "(memrun) is unsupported",
        );
        assert_fail(
            &one_task("      \"sync\": { \"ref\": \"c\", \"mutex\": \"m\" }"),
            4,
            7,
            "(sync) is unsupported",
        );
    }

    #[test]
    fn unknown_fork_and_resume_targets() {
        assert_fail(
            &one_task("      \"fork\": \"nobody\""),
            4,
            15,
            "fork of unknown task \"nobody\"",
        );
        assert_fail(
            &one_task("      \"run\": 1,\n      \"resume\": \"x\""),
            5,
            17,
            "resume of unknown task \"x\"",
        );
    }

    // -----------------------------------------------------------------------------------------
    // Errors: mutex discipline

    #[test]
    fn wait_needs_its_mutex_held() {
        let wait = "      \"wait\": { \"ref\": \"c\", \"mutex\": \"m\" }";
        assert_fail(&one_task(wait), 4, 7, "does not hold \"m\"");
        assert_fail(
            &one_task(&format!("      \"lock\": \"other\",\n{wait}")),
            5,
            7,
            "does not hold \"m\"",
        );
        assert_fail(
            &one_task(&format!(
                "      \"lock\": \"m\",\n      \"unlock\": \"m\",\n{wait}"
            )),
            6,
            7,
            "does not hold",
        );
        // Held across a phase boundary is fine.
        let f = ok(r#"{ "tasks": { "t": { "phases": {
            "a": { "lock": "m", "signal": "c" },
            "b": { "wait": { "ref": "c", "mutex": "m" }, "unlock": "m" } } } } }"#);
        assert!(f.warnings.is_empty(), "{:?}", f.warnings);
    }

    #[test]
    fn relocking_deadlocks() {
        assert_fail(
            &one_task("      \"lock\": \"m\",\n      \"lock1\": \"m\""),
            5,
            7,
            "already holding it (locked at 4:7)",
        );
        assert_fail(
            r#"{ "tasks": { "t": { "phases": {
  "p": { "loop": 2, "lock": "m", "run": 1 } } } } }"#,
            2,
            21,
            "still held when phase \"p\" repeats",
        );
    }

    // -----------------------------------------------------------------------------------------
    // Errors: properties

    #[test]
    fn priority_is_checked_against_the_policy_in_force() {
        assert_fail(
            &one_task("      \"priority\": 20,\n      \"run\": 1"),
            4,
            19,
            "a nice value -20..=19",
        );
        assert_fail(
            &one_task("      \"priority\": -21,\n      \"run\": 1"),
            4,
            19,
            "a nice value",
        );
        let fifo = |prio: &str| {
            one_task(&format!(
                "      \"policy\": \"SCHED_FIFO\",\n      \"priority\": {prio},\n      \"run\": 1"
            ))
        };
        assert_fail(&fifo("0"), 5, 19, "an RT priority 1..=99");
        assert_fail(&fifo("100"), 5, 19, "an RT priority 1..=99");
        assert!(ok(&fifo("99")).warnings.is_empty());
        assert_fail(
            &one_task("      \"policy\": \"SCHED_DEADLINE\",\n      \"dl-runtime\": 100,\n      \"priority\": 1,\n      \"run\": 1"),
            6,
            19,
            "SCHED_DEADLINE",
        );
        // default_policy applies to tasks that name no policy. In `  "tasks": { "t": {
        // "priority": -1`, the key "priority" spans columns 21-30, so -1 is at column 33.
        assert_fail(
            r#"{ "global": { "default_policy": "SCHED_RR" },
  "tasks": { "t": { "priority": -1, "run": 1 } } }"#,
            2,
            33,
            "\"priority\" -1 with SCHED_RR",
        );
        // A phase that names no policy is checked against the one in force.
        assert_fail(
            r#"{ "tasks": { "t": { "policy": "SCHED_RR", "priority": 5, "phases": {
  "a": { "run": 1 },
  "b": { "priority": -5, "run": 1 } } } } }"#,
            3,
            22,
            "with SCHED_RR",
        );
        ok(
            r#"{ "tasks": { "t": { "policy": "SCHED_RR", "priority": 5, "phases": {
  "a": { "policy": "SCHED_OTHER", "run": 1 },
  "b": { "priority": -5, "run": 1 } } } } }"#,
        );
    }

    #[test]
    fn util_clamp_errors() {
        assert_fail(
            &one_task("      \"util_min\": 1025,\n      \"run\": 1"),
            4,
            19,
            "0..=1024",
        );
        assert_fail(
            &one_task("      \"util_max\": -2,\n      \"run\": 1"),
            4,
            19,
            "found -2",
        );
        assert_fail(
            &one_task("      \"util_min\": 600,\n      \"util_max\": 500,\n      \"run\": 1"),
            5,
            19,
            "util_min 600 is above util_max 500",
        );
    }

    #[test]
    fn cpu_list_errors() {
        assert_fail(
            &one_task("      \"cpus\": [],\n      \"run\": 1"),
            4,
            15,
            "must not be empty",
        );
        assert_fail(
            &one_task("      \"cpus\": [0, -1],\n      \"run\": 1"),
            4,
            19,
            "found -1",
        );
        assert_fail(
            &one_task("      \"cpus\": \"0-3\",\n      \"run\": 1"),
            4,
            15,
            "an array",
        );
        assert_fail(
            &one_task("      \"nodes_membind\": [1.5],\n      \"run\": 1"),
            4,
            25,
            "found 1.5",
        );
        assert_fail(
            &one_task("      \"policy\": \"fifo\",\n      \"run\": 1"),
            4,
            17,
            "unknown policy \"fifo\"",
        );
    }

    #[test]
    fn taskgroup_errors() {
        assert_fail(
            &one_task("      \"taskgroup\": \"g\",\n      \"run\": 1"),
            4,
            20,
            "must start with '/'",
        );
        assert_fail(
            &one_task("      \"policy\": \"SCHED_FIFO\",\n      \"priority\": 10,\n      \"taskgroup\": \"/g\",\n      \"run\": 1"),
            6,
            20,
            "taskgroups only for SCHED_OTHER, SCHED_BATCH and SCHED_IDLE",
        );
        // A phase switching to an RT policy while a task-level taskgroup is in force.
        assert_fail(
            r#"{ "tasks": { "t": { "taskgroup": "/g", "phases": {
  "a": { "run": 1 },
  "b": { "policy": "SCHED_FIFO", "priority": 1, "run": 1 } } } } }"#,
            3,
            20,
            "taskgroup (set at 1:34) with SCHED_FIFO",
        );
        // rt-app's limit of 32 distinct groups: task i is on line 3 + i, so the 33rd (i = 32)
        // is on line 35.
        let mut text = String::from("{\n  \"tasks\": {\n");
        for i in 0..33 {
            let comma = if i < 32 { "," } else { "" };
            text += &format!("    \"t{i}\": {{ \"taskgroup\": \"/g{i}\", \"run\": 1 }}{comma}\n");
        }
        text += "  }\n}\n";
        assert_fail(&text, 35, 5, "more than 32 distinct taskgroups");
    }

    #[test]
    fn deadline_parameter_errors() {
        assert_fail(
            &one_task("      \"policy\": \"SCHED_DEADLINE\",\n      \"run\": 1"),
            3,
            5,
            "needs a positive \"dl-runtime\"",
        );
        assert_fail(
            &one_task(
                "      \"policy\": \"SCHED_DEADLINE\",\n      \"dl-runtime\": 1,\n      \"run\": 1",
            ),
            5,
            7,
            "sched_runtime 1000 ns is below the 1024 ns minimum",
        );
        assert_fail(
            &one_task("      \"policy\": \"SCHED_DEADLINE\",\n      \"dl-runtime\": 5000,\n      \"dl-deadline\": 4000,\n      \"run\": 1"),
            6,
            7,
            "5000 / 4000 / 5000 µs: sched_setattr refuses it: sched_runtime 5000000 ns exceeds \
             sched_deadline 4000000 ns",
        );
        assert_fail(
            &one_task("      \"policy\": \"SCHED_DEADLINE\",\n      \"dl-runtime\": 500,\n      \"dl-period\": 1000,\n      \"dl-deadline\": 2000,\n      \"run\": 1"),
            7,
            7,
            "500 / 2000 / 1000 µs: sched_setattr refuses it: sched_deadline 2000000 ns exceeds \
             sched_period 1000000 ns",
        );
        // a period outside sysctl_sched_dl_period_min/max (100 us .. 2^22 us): EINVAL
        assert_fail(
            &one_task("      \"policy\": \"SCHED_DEADLINE\",\n      \"dl-runtime\": 20,\n      \"dl-period\": 50,\n      \"run\": 1"),
            6,
            7,
            "period 50000 ns is outside",
        );
        // dl-period defaults to dl-runtime and dl-deadline to dl-period: valid.
        let f = ok(&one_task(
            "      \"policy\": \"SCHED_DEADLINE\",\n      \"dl-runtime\": 500,\n      \"run\": 1",
        ));
        assert!(f.warnings.is_empty(), "{:?}", f.warnings);
    }
}
