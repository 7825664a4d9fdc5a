//! The `schedlab` binary: parse, dispatch, print, exit code.
//!
//! Exit codes: 0 success, 2 bad input (flag, kernel string, platform, workload line, duration,
//! unsupported configuration), 1 an internal failure (a violated invariant under --strict, an
//! I/O error). Every error is one line on stderr.

mod args;

use args::{Command, Parsed};
use schedlab::{listing, report, RunError, RunSpec};
use std::process::ExitCode;

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let parsed = match args::parse(&argv) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("schedlab: {e}");
            return ExitCode::from(2);
        }
    };
    match dispatch(parsed) {
        Ok(()) => ExitCode::SUCCESS,
        Err((code, msg)) => {
            eprintln!("schedlab: {msg}");
            ExitCode::from(code)
        }
    }
}

type CliResult = Result<(), (u8, String)>;

fn bad(msg: impl Into<String>) -> (u8, String) {
    (2, msg.into())
}

fn dispatch(p: Parsed) -> CliResult {
    match p.command {
        Command::Help => {
            print!("{}", args::help(p.topic.as_deref()));
            Ok(())
        }
        Command::Version => {
            println!("schedlab {}", env!("CARGO_PKG_VERSION"));
            Ok(())
        }
        Command::List => {
            let what = p.positional.first().map(|s| s.as_str()).unwrap_or("");
            let text = match what {
                "kernels" => listing::kernels(),
                "patches" => listing::patches(),
                "features" => listing::features(),
                "sysctls" => listing::sysctls(),
                "platforms" => listing::platforms(),
                "workloads" => listing::workloads(),
                "scenarios" => schedlab::scenario::list(),
                "" => return Err(bad("list: what? (kernels, patches, features, sysctls, platforms, workloads, scenarios)")),
                other => {
                    return Err(bad(format!(
                        "list: unknown list '{other}' (kernels, patches, features, sysctls, platforms, workloads, scenarios)"
                    )))
                }
            };
            print!("{text}");
            Ok(())
        }
        Command::Show => {
            let what = p.positional.first().map(|s| s.as_str()).unwrap_or("");
            let name = p.positional.get(1);
            match (what, name) {
                ("platform", Some(n)) => {
                    print!("{}", listing::show_platform(n).map_err(bad)?);
                    Ok(())
                }
                ("kernel", Some(n)) => {
                    print!("{}", listing::show_kernel_spec(n).map_err(bad)?);
                    Ok(())
                }
                _ => Err(bad(
                    "show: expected 'show platform NAME' or 'show kernel SPEC'",
                )),
            }
        }
        Command::Run => cmd_run(&p),
        Command::Reproduce => schedlab::scenario::cli_reproduce(
            &p.positional,
            p.runs,
            p.quick,
            p.json,
            p.progress,
            p.jobs,
        )
        .map_err(|e| (e.code(), e.to_string())),
        Command::Compare => cmd_compare(&p),
        Command::Bench => {
            let out =
                schedlab::bench::run_benchmarks(p.quick, &p.positional).map_err(|e| (2, e))?;
            print!("{out}");
            Ok(())
        }
    }
}

fn run_spec(p: &Parsed, kernel: &str) -> Result<RunSpec, (u8, String)> {
    let platform = p
        .platform
        .clone()
        .ok_or_else(|| bad("run: --platform is required (e.g. --platform smp:4)"))?;
    if p.workloads.is_empty() {
        return Err(bad("run: at least one --workload is required (e.g. --workload 'rt-app examples/two-hogs.json')"));
    }
    Ok(RunSpec {
        platform,
        kernel: kernel.to_string(),
        workloads: p.workloads.clone(),
        duration_ns: p.duration_ns,
        seed: p.seed.unwrap_or(1),
        strict: p.strict,
        trace: p.trace.clone(),
        progress: p.progress,
    })
}

fn run_error(e: RunError) -> (u8, String) {
    match e {
        RunError::Invariant(_) => (1, e.to_string()),
        RunError::Trace { .. } => (1, e.to_string()),
        other => (2, other.to_string()),
    }
}

fn cmd_run(p: &Parsed) -> CliResult {
    if p.kernels.len() != 1 {
        return Err(bad(
            "run: exactly one --kernel is required (e.g. --kernel v6.18)",
        ));
    }
    let spec = run_spec(p, &p.kernels[0])?;
    let r = schedlab::run(&spec).map_err(run_error)?;
    if p.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report::json(&r)).unwrap()
        );
    } else {
        print!("{}", report::text(&r));
    }
    if r.warnings > 0 && p.strict {
        return Err((1, format!("{} invariant warnings", r.warnings)));
    }
    Ok(())
}

fn cmd_compare(p: &Parsed) -> CliResult {
    if p.kernels.len() < 2 {
        return Err(bad("compare: give at least two --kernel"));
    }
    let spec = run_spec(p, &p.kernels[0])?;
    let out = schedlab::compare::compare(&spec, &p.kernels, p.runs.unwrap_or(3), p.json, p.jobs)
        .map_err(run_error)?;
    print!("{out}");
    Ok(())
}
