//! rt-app (spec workloads.md §10): the front end reads rt-app JSON workload files into a typed,
//! validated [`RtAppFile`] whose errors and warnings name file:line:column (`json`, `model`,
//! `parse`); `plan` compiles it for a machine and a placement, `program` runs it as rt-app's
//! main thread and worker threads over the kernel's syscall surface with the glibc primitives
//! of `sync`, and `report` renders the per-thread logs, summary table and metrics of [`RtApp`].
//!
//! Decisions where the spec is silent (each also stated beside the code that makes it):
//!
//! * **Duplicate keys** — a repeated event key `k` is renamed `k<n>`, n the smallest integer
//!   ≥ 1 such that `k<n>` is no key written in that object and no name already given (so
//!   `run, run, run` → `run, run1, run2`), with a warning; repeated task and phase names are
//!   renamed the same way. Any other repeated key (a property, `loop`, a `global` or timer
//!   member) is an error, because rt-app would silently keep one value.
//! * **Key classification** — exact names (properties, `instance`, `delay`, `loop`, `phases`)
//!   first, then event prefixes in the spec's order. Keys that are neither are errors (rt-app
//!   ignores them, which hides typos). Event keys at task level of a task that has `"phases"`
//!   are errors too (rt-app ignores them).
//! * **Legacy aliases** — `period` and `deadline` are read as `dl-period` / `dl-deadline` at
//!   task level only. `runtime` is the legacy dl-runtime only at task level of a task that has
//!   `"phases"`; in a phase, or a task without phases, it is always the `runtime` event (with a
//!   warning, since real rt-app would also take it as dl-runtime). Giving both spellings is an
//!   error.
//! * **Mutex discipline** — checked over one pass of each task's events in file order: a
//!   `wait` whose mutex the task does not hold at that point is an error (pthread_cond_wait
//!   requires the caller to own the mutex; the outcome otherwise is undefined, which the model
//!   cannot reproduce), as is relocking a held mutex or repeating a phase that ends holding a
//!   mutex it locked (both deadlock a default mutex). An unlock of a mutex not held, or a task
//!   ending its list with a mutex held, only warns.
//! * **Stricter values than rt-app** — `loop` is −1 or ≥ 1; `duration` is −1 or ≥ 1;
//!   resource and task names are non-empty; a timer needs `ref` and a positive `period`; a
//!   `wait` needs `ref` and `mutex`; SCHED_DEADLINE parameters must pass the kernel's
//!   `sched_setattr` checks (rt-dl.md §3.1); priority must fit the policy in force (followed
//!   through the phases in file order, as rt-app's `check_taskgroup_policy_dep()` does).
//! * **rt-app sentinels** — `taskgroup: ""` and `util_min`/`util_max: -1` mean "not set" and
//!   read as `None`.
//! * **Phase-less tasks** — the task object is one phase named after the task with loop 1; its
//!   `loop` is the task's (rt-app stores it on the phase instead; the program is the same).

mod app;
mod json;
mod model;
mod parse;
mod plan;
mod program;
mod report;
pub(crate) mod sync;

pub(crate) use schedlab_engine::input::one_line;
use std::path::{Path, PathBuf};

pub use app::RtApp;
pub use model::{
    Calibration, Event, EventKind, Global, Phase, Policy, Pos, Properties, RtAppFile, TaskDef,
    Timer, TimerMode, Warning,
};
pub use report::{Row, Summary, ThreadLog, ThreadRecord, DEFAULT_LOG_ROWS};

/// Why an rt-app file was rejected. Displays on one line as `FILE:LINE:COL: message`.
#[derive(Debug, thiserror::Error)]
pub enum RtAppError {
    /// Bad syntax or content, at a position in the file.
    #[error("{file}:{pos}: {}", crate::rtapp::one_line(message))]
    Invalid {
        file: String,
        pos: Pos,
        message: String,
    },
    /// The file could not be read.
    #[error("{}: cannot read rt-app file: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl RtAppError {
    /// Where in the file the problem is (`None` for I/O errors).
    pub fn pos(&self) -> Option<Pos> {
        match self {
            RtAppError::Invalid { pos, .. } => Some(*pos),
            RtAppError::Io { .. } => None,
        }
    }
}

/// Parses and validates the text of an rt-app file. `file_name` only labels messages.
pub fn parse_rtapp(text: &str, file_name: &str) -> Result<RtAppFile, RtAppError> {
    parse::parse_file(text, file_name)
}

/// Reads and parses an rt-app file; messages are labelled with `path` as given.
pub fn load_rtapp(path: &Path) -> Result<RtAppFile, RtAppError> {
    let text = schedlab_engine::input::read_input_file(path).map_err(|source| RtAppError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_rtapp(&text, &path.display().to_string())
}

/// The rt-app workload (`rt-app FILE`): the file named by the only argument is read, checked
/// and compiled into task programs ([`RtApp`]).
pub fn workload(
    line: &str,
    args: &[String],
) -> Result<Box<dyn crate::Workload>, crate::WorkloadError> {
    let usage = |message: String| crate::WorkloadError::option(line, message);
    let path = match args {
        [] => return Err(usage("missing FILE (usage: rt-app FILE)".to_string())),
        [path] => path,
        [_, extra, ..] => {
            return Err(usage(format!(
                "unexpected argument '{extra}' (usage: rt-app FILE)"
            )))
        }
    };
    let file = load_rtapp(Path::new(path))?;
    Ok(Box::new(RtApp::new(line, path, file)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn examples_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
    }

    fn example(name: &str) -> RtAppFile {
        load_rtapp(&examples_dir().join(name)).unwrap_or_else(|e| panic!("{e}"))
    }

    fn kinds(task: &TaskDef) -> Vec<EventKind> {
        task.events().map(|e| e.kind.clone()).collect()
    }

    #[test]
    fn every_example_parses_and_explains_itself() {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(examples_dir())
            .expect("examples/ exists")
            .map(|e| e.expect("readable entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        paths.sort();
        assert!(
            paths.len() >= 6,
            "expected the six examples, found {paths:?}"
        );
        for path in &paths {
            let text = std::fs::read_to_string(path).unwrap();
            assert!(
                text.starts_with("//"),
                "{} lacks a leading comment",
                path.display()
            );
            if let Err(e) = load_rtapp(path) {
                panic!("{e}");
            }
        }
    }

    #[test]
    fn slice_probe_is_spec_example_1() {
        // Values from workloads.md §10.7.
        let f = example("slice-probe.json");
        assert_eq!(
            f.global,
            Global {
                duration_s: Some(30),
                calibration: Calibration::Cpu(4),
                default_policy: Policy::Other,
                pi_enabled: false
            }
        );
        let names: Vec<&str> = f.tasks.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["probe", "ping", "pong"]);

        let probe = &f.tasks[0];
        assert_eq!(probe.properties.taskgroup.as_deref(), Some("/test-B"));
        assert_eq!(probe.properties.dl_runtime_us, Some(8000));
        assert_eq!(probe.instance, 1);
        assert_eq!(probe.phases.len(), 1);
        assert_eq!(probe.phases[0].name, "measure");
        assert_eq!(probe.phases[0].loop_count, -1);
        assert_eq!(
            kinds(probe),
            vec![
                EventKind::Run(40),
                EventKind::Timer(Timer {
                    reference: "unique_probe".into(),
                    period_us: 2777,
                    mode: TimerMode::Absolute,
                    unique: true
                })
            ]
        );

        for (task, events) in [
            (
                &f.tasks[1],
                vec![
                    EventKind::Run(120),
                    EventKind::SemPost("to_pong".into()),
                    EventKind::SemWait("to_ping".into()),
                ],
            ),
            (
                &f.tasks[2],
                vec![
                    EventKind::SemWait("to_pong".into()),
                    EventKind::Run(120),
                    EventKind::SemPost("to_ping".into()),
                ],
            ),
        ] {
            assert_eq!(task.instance, 8);
            assert_eq!(task.loop_count, -1);
            assert_eq!(task.properties.taskgroup.as_deref(), Some("/test-A"));
            assert_eq!(task.properties.dl_runtime_us, Some(20000));
            assert_eq!(task.start_policy(&f.global), Policy::Other);
            assert_eq!(kinds(task), events);
        }
        // Only "log_basename" draws a warning.
        assert_eq!(f.warnings.len(), 1, "{:?}", f.warnings);
        assert!(f.warnings[0].message.contains("log_basename"));
    }

    #[test]
    fn pipeline_is_spec_example_2() {
        // Values from workloads.md §10.8.
        let f = example("pipeline.json");
        assert_eq!(f.global.duration_s, Some(20));
        assert_eq!(f.global.calibration, Calibration::NsPerLoop(250));
        assert_eq!(f.global.default_policy, Policy::Other);

        let source = f.task("source").unwrap();
        let p = &source.properties;
        assert_eq!(p.policy, Some(Policy::Deadline));
        assert_eq!(
            (p.dl_runtime_us, p.dl_period_us, p.dl_deadline_us),
            (Some(2000), Some(10000), Some(8000))
        );
        assert_eq!(
            kinds(source),
            vec![
                EventKind::Run(1200),
                EventKind::SemPost("stage1".into()),
                EventKind::Timer(Timer {
                    reference: "source_tick".into(),
                    period_us: 10000,
                    mode: TimerMode::Relative,
                    unique: false
                })
            ]
        );

        let filter = f.task("filter").unwrap();
        assert_eq!(filter.instance, 2);
        assert_eq!(filter.properties.cpus, Some(vec![0, 1]));
        assert_eq!(
            kinds(filter),
            vec![
                EventKind::SemWait("stage1".into()),
                EventKind::Run(1500),
                EventKind::Lock("out_lock".into()),
                EventKind::Run(80),
                EventKind::Unlock("out_lock".into()),
                EventKind::SemPost("stage2".into()),
            ]
        );
        let keys: Vec<&str> = filter.events().map(|e| e.key.as_str()).collect();
        assert_eq!(keys[1..4], ["run0", "lock", "run1"]);

        let sink = f.task("sink").unwrap();
        assert_eq!(sink.properties.util_min, Some(512));
        assert_eq!(
            kinds(sink),
            vec![
                EventKind::SemWait("stage2".into()),
                EventKind::Run(400),
                EventKind::Yield
            ]
        );

        let bg = f.task("background").unwrap();
        assert_eq!(bg.instance, 4);
        assert_eq!(bg.start_policy(&f.global), Policy::Idle);
        assert_eq!(bg.loop_count, -1);
        let phases: Vec<(&str, i64)> = bg
            .phases
            .iter()
            .map(|p| (p.name.as_str(), p.loop_count))
            .collect();
        assert_eq!(phases, [("ramp", 1), ("steady", -1)]);
        assert_eq!(
            kinds(bg),
            vec![
                EventKind::Runtime(500000),
                EventKind::Barrier("bg_ready".into()),
                EventKind::Run(5000),
                EventKind::Sleep(1000),
            ]
        );
        assert!(f.warnings.is_empty(), "{:?}", f.warnings);
    }

    #[test]
    fn small_examples() {
        let f = example("two-hogs.json");
        assert_eq!(f.tasks.len(), 2);
        for t in &f.tasks {
            assert_eq!(t.start_policy(&f.global), Policy::Other);
            assert_eq!(t.properties.priority, Some(0));
            assert_eq!(kinds(t), vec![EventKind::Run(100000)]);
        }

        let f = example("nice-0-vs-5.json");
        let prios: Vec<Option<i32>> = f.tasks.iter().map(|t| t.properties.priority).collect();
        assert_eq!(prios, [Some(0), Some(5)]);

        let f = example("periodic-vs-hog.json");
        let periodic = f.task("periodic").unwrap();
        assert_eq!(
            kinds(periodic),
            vec![
                EventKind::Run(1000),
                EventKind::Timer(Timer {
                    reference: "unique_tick".into(),
                    period_us: 10000,
                    mode: TimerMode::Relative,
                    unique: true
                })
            ]
        );

        let f = example("short-slice-waker.json");
        assert_eq!(f.task("hog").unwrap().properties.dl_runtime_us, Some(20000));
        assert_eq!(
            f.task("waker").unwrap().properties.dl_runtime_us,
            Some(1000)
        );

        for name in [
            "two-hogs.json",
            "nice-0-vs-5.json",
            "periodic-vs-hog.json",
            "short-slice-waker.json",
        ] {
            assert!(example(name).warnings.is_empty(), "{name}");
        }
    }

    #[test]
    fn load_reports_io_errors_with_the_path() {
        let path = examples_dir().join("no-such-file.json");
        let e = load_rtapp(&path).unwrap_err();
        assert!(matches!(e, RtAppError::Io { .. }));
        assert_eq!(e.pos(), None);
        let shown = e.to_string();
        assert!(shown.starts_with(&path.display().to_string()), "{shown}");
        assert!(shown.contains("cannot read rt-app file"), "{shown}");
    }

    #[test]
    fn errors_display_as_file_line_column_message() {
        let e = parse_rtapp(
            "{\n  \"tasks\": {\n    \"t\": { \"run\": 1, \"bogus\": 2 }\n  }\n}",
            "w.json",
        )
        .unwrap_err();
        // `    "t": { "run": 1, "bogus"`: "bogus" opens at column 22 of line 3.
        assert_eq!(
            e.pos(),
            Some(Pos {
                line: 3,
                column: 22
            })
        );
        assert_eq!(
            e.to_string(),
            "w.json:3:22: unknown task key \"bogus\": not a property, and no event type is a \
             prefix of it"
        );
        // Key names are quoted with escapes, so a message stays on one line.
        let e = parse_rtapp("{ \"tasks\": { \"t\": { \"a\\nb\": 1 } } }", "w.json").unwrap_err();
        assert!(!e.to_string().contains('\n'), "{e}");
    }
}
