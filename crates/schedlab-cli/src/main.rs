//! The `schedlab` binary: parse, dispatch, print, exit code.
//!
//! Exit codes: 0 success, 2 bad input (flag, kernel string, platform, workload line, input
//! file, duration, unsupported configuration), 1 a failure of the run or of its output (a
//! violated invariant under --strict, a trace file or stdout that cannot be written), 130 after
//! SIGINT/SIGTERM (temporary files removed first). Every error is one line on stderr.
//! stdout closed by its reader (`schedlab run --json | head -1`) ends the program quietly
//! with exit code 0.

mod args;
mod plot;
mod python;

use args::{Cli, Cmd, ListWhat, ProgressWhen, ShowWhat};
use schedlab::{listing, report, RunError, RunSpec};
use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    // SIGINT/SIGTERM: remove the temporary files of outputs being written, then exit 130.
    let _ = ctrlc::set_handler(|| {
        schedlab::trace_file::remove_temp_files_and_exit(130, "schedlab: interrupted");
    });
    let argv: Vec<OsString> = std::env::args_os().skip(1).collect();
    let cli = match args::parse(&argv) {
        Ok(c) => c,
        Err((0, text)) => return finish(emit(text.as_bytes())),
        Err((code, e)) => return finish(Err((code, e))),
    };
    finish(dispatch(cli))
}

fn finish(r: CliResult) -> ExitCode {
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err((code, msg)) => {
            if !msg.is_empty() {
                let _ = writeln!(std::io::stderr(), "schedlab: {msg}");
            }
            ExitCode::from(code)
        }
    }
}

/// `Err((code, message))`; an empty message exits with `code` silently.
type CliResult = Result<(), (u8, String)>;

fn bad(msg: impl Into<String>) -> (u8, String) {
    (2, msg.into())
}

/// What a failed write to stdout means: the reader went away (EPIPE) ends quietly with 0;
/// anything else (ENOSPC, EIO) is a failure, exit 1.
fn stdout_error(e: &std::io::Error) -> (u8, String) {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        (0, String::new())
    } else {
        (1, format!("writing to stdout: {e}"))
    }
}

/// Writes to stdout and flushes, so that a full disk is reported here and not lost.
fn emit(bytes: &[u8]) -> CliResult {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|_| out.flush())
        .map_err(|e| stdout_error(&e))
}

fn progress(when: ProgressWhen) -> bool {
    schedlab::run::force_progress(when == ProgressWhen::Always);
    when != ProgressWhen::Never
}

fn dispatch(cli: Cli) -> CliResult {
    let Some(cmd) = cli.command else {
        return emit(args::help(None).unwrap().as_bytes());
    };
    match cmd {
        Cmd::Help { command } => {
            let text = args::help(command.as_deref()).map_err(bad)?;
            emit(text.as_bytes())
        }
        Cmd::Version => emit(format!("schedlab {}\n", env!("CARGO_PKG_VERSION")).as_bytes()),
        Cmd::Completions { shell } => emit(&args::completions(shell)),
        Cmd::Man => emit(&args::man().map_err(|e| (1, format!("man: {e}")))?),
        Cmd::List { what } => {
            let text = match what {
                ListWhat::Kernels => listing::kernels(),
                ListWhat::Patches => listing::patches(),
                ListWhat::Features => listing::features(),
                ListWhat::Sysctls => listing::sysctls(),
                ListWhat::Platforms => listing::platforms(),
                ListWhat::Workloads => listing::workloads(),
                ListWhat::Scenarios => schedlab::scenario::list(),
            };
            emit(text.as_bytes())
        }
        Cmd::Show { what } => {
            let text = match what {
                ShowWhat::Platform { name } => listing::show_platform(&name).map_err(bad)?,
                ShowWhat::Kernel { spec } => listing::show_kernel_spec(&spec).map_err(bad)?,
            };
            emit(text.as_bytes())
        }
        Cmd::Run(a) => cmd_run(a),
        Cmd::Reproduce(a) => {
            let progress = progress(a.progress.when());
            let mut out = std::io::stdout().lock();
            let flags = schedlab::scenario::SweepFlags {
                full_size: a.full_size,
                check_scaling: a.check_scaling,
                skip: a.only.unwrap_or(0),
            };
            let r = schedlab::scenario::cli_reproduce_html(
                &a.names,
                a.runs,
                a.quick,
                a.json,
                progress,
                &mut out,
                a.jobs,
                flags,
                a.html.as_deref(),
            );
            match r {
                Ok(()) => Ok(()),
                Err(schedlab::scenario::ScenarioError::Output(e)) => Err(stdout_error(&e)),
                Err(e) => Err((e.code(), e.to_string())),
            }
        }
        Cmd::Compare(a) => cmd_compare(a),
        Cmd::Sweep(a) => python::sweep(a),
        Cmd::Report(a) => python::report(a),
        Cmd::Plot { what } => plot::run(what),
        Cmd::Bench { names, quick } => {
            let out = schedlab::bench::run_benchmarks(quick, &names).map_err(|e| (2, e))?;
            emit(out.as_bytes())
        }
    }
}

fn run_spec(cmd: &str, sim: &args::SimArgs, kernel: &str) -> Result<RunSpec, (u8, String)> {
    let platform = sim.platform.clone().ok_or_else(|| {
        bad(format!(
            "{cmd}: --platform is required (e.g. --platform smp:4)"
        ))
    })?;
    if sim.workloads.is_empty() {
        return Err(bad(format!("{cmd}: at least one --workload is required (e.g. --workload 'rt-app examples/two-hogs.json')")));
    }
    let mut spec = RunSpec::new(&platform, kernel, &[]);
    spec.workloads = sim.workloads.clone();
    spec.duration_ns = sim.duration_ns;
    spec.seed = sim.seed.unwrap_or(1);
    if let Some(f) = &sim.cgroup_file {
        spec.cgroups = schedlab::cgroups::Cgroups::load_file(f).map_err(bad)?;
    }
    for v in &sim.cgroups {
        spec.cgroups
            .extend(schedlab::cgroups::Cgroups::parse_flag(v).map_err(bad)?);
    }
    Ok(spec)
}

fn run_error(e: RunError) -> (u8, String) {
    match e {
        RunError::Invariant(_) => (1, e.to_string()),
        RunError::Trace { .. } => (1, e.to_string()),
        other => (2, other.to_string()),
    }
}

fn cmd_run(a: args::RunArgs) -> CliResult {
    if a.sim.kernels.len() != 1 {
        return Err(bad(
            "run: exactly one --kernel is required (e.g. --kernel v6.18)",
        ));
    }
    let mut spec = run_spec("run", &a.sim, &a.sim.kernels[0])?;
    spec.strict = a.strict;
    spec.trace = a.trace.clone();
    spec.trace_limit = a.trace_limit;
    spec.progress = progress(a.progress.when());
    if let Some(v) = &a.explain_wakeups {
        schedlab::run::parse_explain_wakeups(v).map_err(|e| bad(&e))?;
        spec.explain_wakeups = Some(v.clone());
    }
    let r = match schedlab::run(&spec) {
        // `--trace -` into a closed pipe: the reader went away, as for any stdout output
        Err(RunError::Trace { path, source })
            if path == "-" && source.kind() == std::io::ErrorKind::BrokenPipe =>
        {
            return Err(stdout_error(&source));
        }
        r => r.map_err(run_error)?,
    };
    if a.json {
        let mut text = serde_json::to_string_pretty(&report::json(&r))
            .map_err(|e| (1, format!("JSON: {e}")))?;
        text.push('\n');
        emit(text.as_bytes())?;
    } else {
        emit(report::text(&r).as_bytes())?;
    }
    if r.warnings > 0 && a.strict {
        return Err((1, format!("{} invariant warnings", r.warnings)));
    }
    Ok(())
}

fn cmd_compare(a: args::CompareArgs) -> CliResult {
    if a.sim.kernels.len() < 2 {
        return Err(bad("compare: give at least two --kernel"));
    }
    let mut spec = run_spec("compare", &a.sim, &a.sim.kernels[0])?;
    spec.progress = progress(a.progress.when());
    let out =
        schedlab::compare::compare(&spec, &a.sim.kernels, a.runs.unwrap_or(3), a.json, a.jobs)
            .map_err(run_error)?;
    emit(out.as_bytes())
}
