//! The rt-app workload (`rt-app FILE`): sets up the process's main task in the kernel, and after
//! the run renders the summary table, the per-thread logs and the metrics.

use std::cell::RefCell;
use std::fmt::Write as _;
use std::rc::Rc;

use schedlab_sched::sched::TaskId;
use schedlab_sched::{Procfs, Sys};

use super::model::{Calibration, RtAppFile};
use super::plan::{compile, MachineInfo, Plan, PlanError};
use super::program::{MainProg, Shared};
use super::report::{self, ThreadLog, ThreadRecord, DEFAULT_LOG_ROWS};
use crate::workload::{
    parse_placement, DlReservation, Env, Metric, Placement, Workload, WorkloadError,
};

/// A running (or ready) rt-app process.
struct Process {
    plan: Rc<Plan>,
    sh: Rc<RefCell<Shared>>,
    main: TaskId,
}

/// The rt-app workload built from a parsed file.
pub struct RtApp {
    line: String,
    path: String,
    file: RtAppFile,
    /// Compiled without the machine, for early errors and the duration hint.
    preview: Plan,
    log_rows: usize,
    process: Option<Process>,
}

fn plan_error(line: &str, path: &str, e: PlanError) -> WorkloadError {
    match e {
        PlanError::Unsupported(m) => WorkloadError::Unsupported {
            line: line.to_string(),
            message: format!("{path}: {m}"),
        },
        PlanError::Invalid(m) => WorkloadError::Option {
            line: line.to_string(),
            message: format!("{path}: {m}"),
        },
    }
}

impl RtApp {
    /// Builds the workload for `file` (read from `path`, which only labels messages). The
    /// placement tokens of `line` are used for the early checks; `setup` uses the `Env`'s.
    pub fn new(line: &str, path: &str, file: RtAppFile) -> Result<RtApp, WorkloadError> {
        let placement = parse_placement(line)
            .map(|(p, _)| p)
            .unwrap_or_else(|_| Placement::default());
        let preview = compile(&file, &placement, None).map_err(|e| plan_error(line, path, e))?;
        Ok(RtApp {
            line: line.to_string(),
            path: path.to_string(),
            file,
            preview,
            log_rows: DEFAULT_LOG_ROWS,
            process: None,
        })
    }

    /// The parsed file.
    pub fn file(&self) -> &RtAppFile {
        &self.file
    }

    /// How many log rows are kept in memory per thread (default [`DEFAULT_LOG_ROWS`]); the
    /// summary counts every row. Call before `setup`.
    pub fn set_log_rows(&mut self, rows: usize) {
        self.log_rows = rows;
    }

    /// The threads created so far, in creation order.
    pub fn threads(&self) -> Vec<ThreadRecord> {
        self.process
            .as_ref()
            .map(|p| p.sh.borrow().threads.clone())
            .unwrap_or_default()
    }

    /// When rt-app's main thread stopped the threads (ns), if it did.
    pub fn stopped_at(&self) -> Option<u64> {
        self.process.as_ref().and_then(|p| p.sh.borrow().stopped_at)
    }

    /// Per-thread logs as rt-app writes them (§10.5), in creation order.
    pub fn thread_logs(&self) -> Vec<ThreadLog> {
        let Some(p) = &self.process else {
            return Vec::new();
        };
        let sh = p.sh.borrow();
        sh.threads
            .iter()
            .map(|t| ThreadLog {
                thread: t.name.clone(),
                file_name: format!("rt-app-{}.log", t.name),
                text: t.log_text(sh.t_start),
            })
            .collect()
    }

    fn describe(&self) -> String {
        let g = &self.file.global;
        let duration = match g.duration_s {
            Some(s) => format!("duration {s} s"),
            None => "until the threads finish".to_string(),
        };
        let calibration = match g.calibration {
            Calibration::Cpu(n) => format!("calibration CPU{n}"),
            Calibration::NsPerLoop(ns) => format!("calibration {ns} ns/loop"),
        };
        format!("rt-app {}: {duration}, {calibration}", self.path)
    }
}

impl Workload for RtApp {
    fn max_tasks(&self, _ncpus: usize) -> u64 {
        // The main process plus every thread started at the beginning (Σ instance); threads
        // created later by "fork" events are not counted.
        1 + self
            .file
            .tasks
            .iter()
            .map(|t| u64::from(t.instance))
            .sum::<u64>()
    }

    fn program(&self) -> &str {
        "rt-app"
    }

    /// The line's placement is the default of each thread's own policy: rt-app's main task
    /// creates the threads, but it never runs SCHED_DEADLINE itself.
    fn placement_task_forks(&self) -> bool {
        false
    }

    /// Every thread started at the beginning whose policy is SCHED_DEADLINE, named as rt-app
    /// names its threads (`task-N`); threads created later by `fork` events are not counted.
    fn dl_reservations(&self, _placement: &Placement) -> Vec<DlReservation> {
        let plan = &self.preview;
        plan.initial
            .iter()
            .enumerate()
            .filter_map(|(ind, &def)| {
                let t = &plan.tasks[def];
                t.dl.map(|attr| DlReservation {
                    task: format!("{}-{ind}", t.name),
                    attr,
                    cpus: t.cpus.clone(),
                })
            })
            .collect()
    }

    fn setup(&mut self, sys: &mut dyn Sys, env: &Env) -> Result<(), WorkloadError> {
        // what rt-app's calibration loop would measure on each CPU
        let speed: Vec<u64> = (0..sys.ncpus()).map(|c| sys.cpu_speed(c)).collect();
        let machine = MachineInfo { speed: &speed };
        let plan = compile(&self.file, &env.placement, Some(&machine))
            .map_err(|e| plan_error(&self.line, &self.path, e))?;
        let plan = Rc::new(plan);
        let mut shared = Shared::new(&plan, sys, self.log_rows);
        // rt-app's cgroup_setup(): every taskgroup is created (mkdir -p) before the threads
        for path in &plan.taskgroups {
            let tg = sys.cgroup_mkdir(path).map_err(|e| {
                WorkloadError::unsupported(&self.line, format!("taskgroup {path:?}: {e}"))
            })?;
            shared.groups.push(tg);
        }
        let sh = Rc::new(RefCell::new(shared));
        let mut attrs = env.placement.attrs("rt-app", env.tg);
        if attrs.policy == Some(schedlab_sched::sched::Policy::Deadline) {
            // The line's SCHED_DEADLINE is the threads' default (plan.rs); the main task keeps
            // its parent's policy: a SCHED_DEADLINE main could not create the threads
            // (sched_fork: EAGAIN), and it is not one of the reservations admitted.
            attrs.policy = None;
            attrs.dl = None;
        }
        let main = sys.fork(Box::new(MainProg::new(sh.clone(), plan.clone())), &attrs);
        sys.wake_up_new_task(main);
        self.process = Some(Process { plan, sh, main });
        Ok(())
    }

    fn output(&self, _procfs: &dyn Procfs) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "{}", self.describe());
        for w in &self.file.warnings {
            let _ = writeln!(s, "{w}");
        }
        let notes = match &self.process {
            Some(p) => &p.plan.notes,
            None => &self.preview.notes,
        };
        for n in notes {
            let _ = writeln!(s, "{}: note: {n}", self.path);
        }
        let Some(p) = &self.process else {
            return s;
        };
        let sh = p.sh.borrow();
        for e in &sh.errors {
            let _ = writeln!(s, "{}: error: {e}", self.path);
        }
        let _ = writeln!(
            s,
            "{} threads; times in us; wu_lat and slack over the loops that used a timer",
            sh.threads.len()
        );
        s.push_str(&report::summary_table(&sh.threads));
        s
    }

    fn metrics(&self, _procfs: &dyn Procfs) -> Vec<Metric> {
        match &self.process {
            Some(p) => report::metrics(&p.sh.borrow().threads),
            None => Vec::new(),
        }
    }

    fn tasks(&self) -> Vec<TaskId> {
        let Some(p) = &self.process else {
            return Vec::new();
        };
        let sh = p.sh.borrow();
        std::iter::once(p.main)
            .chain(sh.threads.iter().filter_map(|t| t.task))
            .collect()
    }

    fn duration_hint(&self) -> Option<u64> {
        self.preview.duration_hint()
    }
}
