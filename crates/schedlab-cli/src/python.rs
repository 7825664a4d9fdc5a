//! `schedlab sweep` and `schedlab report` run in the Python package (`python3 -m schedlab ...`):
//! the sweep's backends (a thread pool, Ray) and the Parquet files live there. This module finds
//! the interpreter, checks that the package is installed, and execs it with the flags.

use crate::args::{ProgressWhen, ReportArgs, SweepArgs};
use std::ffi::OsString;
use std::process::Command;

/// How to install what is missing, the one line printed when the package cannot be found.
const INSTALL: &str = "install the Python package from a clone with 'pip install ./python'";

/// The interpreter: `$SCHEDLAB_PYTHON`, else `python3` on the PATH.
fn python() -> OsString {
    std::env::var_os("SCHEDLAB_PYTHON")
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "python3".into())
}

/// Replaces this process with `python -m schedlab CMD ARGS`.
/// A missing interpreter or package is bad set-up: exit 2 with one line saying how to install.
fn run_module(cmd: &str, args: Vec<OsString>) -> Result<(), (u8, String)> {
    let py = python();
    // find_spec, not import: an import error inside the package must show its own message
    let probe = Command::new(&py)
        .args([
            "-P",
            "-c",
            "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('schedlab') else 3)",
        ])
        .status();
    match probe {
        Err(e) => {
            return Err((
                2,
                format!(
                    "{cmd}: cannot run {} ({e}); needs Python 3.11+ with the schedlab package: {INSTALL}",
                    py.to_string_lossy()
                ),
            ))
        }
        Ok(s) if s.code() == Some(3) => {
            return Err((
                2,
                format!(
                    "{cmd}: the Python package 'schedlab' is not installed for {}: {INSTALL}",
                    py.to_string_lossy()
                ),
            ))
        }
        Ok(s) if !s.success() => {
            return Err((
                2,
                format!(
                    "{cmd}: {} failed to start ({s}); needs Python 3.11+: {INSTALL}",
                    py.to_string_lossy()
                ),
            ))
        }
        Ok(_) => {}
    }
    // -P: the current directory is not put on sys.path, so a directory named schedlab there
    // (a clone's python/ as the working directory, say) does not shadow the installed package
    let mut argv: Vec<OsString> = vec!["-P".into(), "-m".into(), "schedlab".into(), cmd.into()];
    argv.extend(args);
    // exec, not spawn: Python becomes this process, so SIGINT/SIGTERM, the exit status and the
    // terminal are its own (no second handler racing it); exec returns only on failure
    use std::os::unix::process::CommandExt;
    let e = Command::new(&py).args(&argv).exec();
    Err((1, format!("{cmd}: running {}: {e}", py.to_string_lossy())))
}

/// `schedlab sweep FILE.toml [--resume] [--ray ADDRESS] [--out DIR] [--jobs N]`
pub fn sweep(a: SweepArgs) -> Result<(), (u8, String)> {
    let mut args: Vec<OsString> = vec![a.file.into_os_string()];
    if a.resume {
        args.push("--resume".into());
    }
    if let Some(r) = a.ray {
        args.extend(["--ray".into(), r.into()]);
    }
    if let Some(o) = a.out {
        args.extend(["--out".into(), o.into_os_string()]);
    }
    if let Some(j) = a.jobs {
        args.extend(["--jobs".into(), j.to_string().into()]);
    }
    let when = match a.progress.when() {
        ProgressWhen::Auto => "auto",
        ProgressWhen::Always => "always",
        ProgressWhen::Never => "never",
    };
    args.extend(["--progress".into(), when.into()]);
    run_module("sweep", args)
}

/// `schedlab report SWEEP.parquet [-o DIR]`
pub fn report(a: ReportArgs) -> Result<(), (u8, String)> {
    let mut args: Vec<OsString> = vec![a.parquet.into_os_string()];
    if let Some(o) = a.out {
        args.extend(["--out".into(), o.into_os_string()]);
    }
    run_module("report", args)
}
