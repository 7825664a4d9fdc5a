//! The command line, declared once with clap's derive: parsing, `help`, shell completions and
//! the man page all come from these types.
//!
//! Errors keep the project's style: one line on stderr, `schedlab: ...`, exit code 2
//! ([`one_line`] folds clap's multi-line error into that line).

use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
use std::path::PathBuf;

/// The exit codes, printed at the end of `--help` (and in the README).
pub const EXIT_CODES: &str = "\
Exit status:
  0  success
  1  the run or its output failed (an invariant violated under --strict, a trace file or
     stdout that cannot be written, interrupted by SIGINT/SIGTERM: 130)
  2  bad input (a flag, kernel string, platform, workload line, input file or value)";

const EXAMPLES: &str = "\
Examples:
  schedlab reproduce
  schedlab run --platform smp:1 --kernel v6.18 --workload 'rt-app examples/two-hogs.json' --duration 10s
  schedlab compare --platform rpi5 --kernel v6.6 --kernel v6.12 --workload 'stress-ng --pipe 4 --timeout 20s' --runs 5

'schedlab help COMMAND' lists the flags of a command.";

#[derive(Parser, Debug)]
#[command(
    name = "schedlab",
    version,
    about = "A deterministic simulator of the Linux CPU scheduler",
    disable_help_subcommand = true,
    after_help = format!("{EXAMPLES}\n\n{EXIT_CODES}"),
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Cmd>,
}

#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Simulate one configuration and print the benchmarks' output and a summary
    #[command(after_help = EXIT_CODES)]
    Run(RunArgs),
    /// Run built-in seed reproductions: published vs simulated numbers
    #[command(after_help = EXIT_CODES)]
    Reproduce(ReproduceArgs),
    /// mmtests-style table of several kernels on one workload
    #[command(after_help = EXIT_CODES)]
    Compare(CompareArgs),
    /// Run a sweep described by a TOML file (platforms × kernels × workloads × durations ×
    /// seeds), locally or on Ray, into a Parquet dataset; needs the Python package
    #[command(after_help = SWEEP_HELP)]
    Sweep(SweepArgs),
    /// Write the HTML report of a sweep's results.parquet; needs the Python package
    #[command(after_help = EXIT_CODES)]
    Report(ReportArgs),
    /// Draw a figure (SVG) from a trace, cyclictest output, reproduce --json or a sweep table
    #[command(after_help = PLOT_HELP)]
    Plot {
        #[command(subcommand)]
        what: PlotWhat,
    },
    /// List kernels | patches | features | sysctls | platforms | workloads | scenarios
    List {
        #[arg(value_enum)]
        what: ListWhat,
    },
    /// Show platform NAME | show kernel SPEC
    Show {
        #[command(subcommand)]
        what: ShowWhat,
    },
    /// Simulator speed (simulated context switches per wall second)
    Bench {
        /// benchmarks to run: pingpong, hogs, smp, stress-ng, tbench (default: all)
        #[arg(value_name = "NAME")]
        names: Vec<String>,
        /// shorter runs
        #[arg(long)]
        quick: bool,
    },
    /// Print the help of schedlab or of one command
    Help {
        /// the command to describe
        #[arg(value_name = "COMMAND")]
        command: Option<String>,
    },
    /// Print the version
    Version,
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) of schedlab
    Man,
}

/// The sweep file's format and what `schedlab sweep` writes, at the end of its help.
const SWEEP_HELP: &str = "\
The sweep file (TOML, keys at the top level; examples/sweeps/seed000.toml):
  platforms = [\"rpi5\"]                       # required; a string means one
  kernels   = [\"v6.6.78\", \"v6.12.81\"]        # required
  workloads = [\"stress-ng --pipe 4 --timeout 1s --metrics-brief\"]
                                   # required; an entry may be a list of lines run together
  durations = [\"1s\"]                        # default: the workloads' own duration
  seeds     = \"1..10\"                       # 1 through 10, or a list [1, 2, 3]; default 1
  out       = \"DIR\"                         # default: FILE's name without .toml + \"-sweep\"
  backend   = \"local\"                       # or \"ray\"
  ray_address = \"auto\"                      # for backend \"ray\": ray.init(address=...)
  jobs      = 2                             # simulations at once
The flags override the file. One job per (platform, kernel, workload, duration, seed); each
finished job is written to DIR/jobs/ at once, so a killed sweep continues with --resume without
redoing finished jobs; at the end the whole long table (platform, kernel, workload, duration,
seed, metric, unit, value) is DIR/results.parquet. Results are the same on either backend and for
any --jobs.

Runs 'python3 -m schedlab sweep ...' (SCHEDLAB_PYTHON names another interpreter); install the
package with 'pip install ./python' from a clone.

Exit status:
  0  success
  1  a failure of the run or of its output; 130 interrupted
  2  bad input (the file: its line, key and value; a flag; a directory holding another sweep;
     a job refused by the simulator), or the Python package is not installed";

/// `schedlab sweep FILE.toml ...`
#[derive(Args, Debug)]
pub struct SweepArgs {
    /// the sweep file (TOML)
    #[arg(value_name = "FILE.toml")]
    pub file: PathBuf,
    /// continue the sweep in the output directory: run only the jobs without a result (the
    /// configuration must be the same)
    #[arg(long)]
    pub resume: bool,
    /// run on the Ray cluster at ADDRESS (e.g. auto, ray://head:10001), one task per job
    #[arg(long, value_name = "ADDRESS")]
    pub ray: Option<String>,
    /// output directory (default: the file's `out`, else FILE's name without .toml + -sweep)
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// simulations to run at once (local default: all cores; Ray: all jobs submitted);
    /// results are the same for any N
    #[arg(long, value_name = "N", value_parser = parse_jobs)]
    pub jobs: Option<usize>,
    #[command(flatten)]
    pub progress: ProgressArgs,
}

/// `schedlab report SWEEP.parquet [-o DIR]`
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// a sweep's results.parquet
    #[arg(value_name = "SWEEP.parquet")]
    pub parquet: PathBuf,
    /// directory for index.html (default: report/ beside the Parquet file)
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    pub out: Option<PathBuf>,
}

const PLOT_HELP: &str = "\
Every figure is one SVG file, written whole or not at all (-o). The same input gives the same
bytes. Text is drawn by the viewer's sans-serif font (no font is embedded).
'schedlab plot KIND --help' lists the flags of each kind.

Examples:
  schedlab run --platform rpi5 --kernel v6.12 --workload 'stress-ng --pipe 4 --timeout 1s' --trace a.trace
  schedlab plot latency a.trace b.trace --comm stress-ng-pipe -o latency.svg
  schedlab plot latency a.trace b.trace --hist -o latency-hist.svg
  schedlab plot timeline a.trace --from 0.5s --to 0.52s -o who-ran.svg
  schedlab plot cyclictest cyclictest-output.txt -o cyclictest.svg
  schedlab reproduce delay-dequeue --quick --json > dd.json
  schedlab plot reproduction dd.json -o figures/
  schedlab plot sweep results.csv --metric time --x -g -o hackbench.svg

Exit status: 0 success, 1 the output cannot be written, 2 bad input (file, line, flag or value).";

/// `schedlab plot KIND`
#[derive(Subcommand, Debug)]
pub enum PlotWhat {
    /// Wakeup latency CDF (or histogram) per trace: sched_wakeup/sched_wakeup_new to the
    /// sched_switch that runs the task
    Latency {
        /// trace files (text of /sys/kernel/tracing/trace or schedlab run --trace); one
        /// curve each
        #[arg(value_name = "TRACE", required = true)]
        traces: Vec<PathBuf>,
        /// only the wakeups of tasks with this comm
        #[arg(long, value_name = "COMM")]
        comm: Option<String>,
        /// the label of each trace, in order (default: the file name); repeat once per trace
        #[arg(long = "label", value_name = "TEXT")]
        labels: Vec<String>,
        /// a histogram per trace instead of the CDF
        #[arg(long)]
        hist: bool,
        /// figure title
        #[arg(long, value_name = "TEXT")]
        title: Option<String>,
        /// the SVG file to write
        #[arg(short, long, value_name = "OUT.svg", required = true)]
        output: PathBuf,
    },
    /// Who ran on each CPU: a row per CPU, a bar per run coloured per task
    Timeline {
        /// trace file
        #[arg(value_name = "TRACE")]
        trace: PathBuf,
        /// start of the window: trace time in seconds (1.5) or a duration (1500ms)
        #[arg(long, value_name = "T")]
        from: Option<String>,
        /// end of the window (same forms as --from)
        #[arg(long, value_name = "T")]
        to: Option<String>,
        /// figure title
        #[arg(long, value_name = "TEXT")]
        title: Option<String>,
        /// the SVG file to write
        #[arg(short, long, value_name = "OUT.svg", required = true)]
        output: PathBuf,
    },
    /// cyclictest's -h/-H histogram (its own output, real or simulated), log y
    Cyclictest {
        /// cyclictest's output (stdout of cyclictest -h N, or schedlab run's text)
        #[arg(value_name = "OUTPUT.txt")]
        input: PathBuf,
        /// figure title
        #[arg(long, value_name = "TEXT")]
        title: Option<String>,
        /// the SVG file to write
        #[arg(short, long, value_name = "OUT.svg", required = true)]
        output: PathBuf,
    },
    /// Published vs simulated bars of a reproduce --json document, per scenario and metric
    Reproduction {
        /// the output of schedlab reproduce --json
        #[arg(value_name = "REPRODUCE.json")]
        input: PathBuf,
        /// only this scenario
        #[arg(long, value_name = "NAME")]
        scenario: Option<String>,
        /// only this metric (default: the metrics with a published value)
        #[arg(long, value_name = "METRIC")]
        metric: Option<String>,
        /// OUT.svg for one figure, or a directory for one SCENARIO_METRIC.svg per figure
        #[arg(short, long, value_name = "OUT", required = true)]
        output: PathBuf,
    },
    /// A metric against a workload option (groups, clients), one curve per kernel, mean ± sd
    /// over the seeds
    Sweep {
        /// the long table as CSV (columns platform, kernel, workload, duration, seed, metric,
        /// unit, value)
        #[arg(value_name = "RESULTS.csv")]
        input: PathBuf,
        /// the metric to plot
        #[arg(long, value_name = "METRIC", required = true)]
        metric: String,
        /// the workload option whose number is x (e.g. -g); default: the option whose value is
        /// the only difference between the workload lines
        #[arg(long, value_name = "OPTION", allow_hyphen_values = true)]
        x: Option<String>,
        /// figure title
        #[arg(long, value_name = "TEXT")]
        title: Option<String>,
        /// the SVG file to write
        #[arg(short, long, value_name = "OUT.svg", required = true)]
        output: PathBuf,
    },
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListWhat {
    Kernels,
    Patches,
    Features,
    Sysctls,
    Platforms,
    Workloads,
    Scenarios,
}

#[derive(Subcommand, Debug)]
pub enum ShowWhat {
    /// A platform: built-in name, smp:N or a TOML file
    Platform {
        #[arg(value_name = "NAME")]
        name: String,
    },
    /// A kernel string, resolved (features, patches, tunables)
    Kernel {
        #[arg(value_name = "SPEC", allow_hyphen_values = true)]
        spec: String,
    },
}

/// When to draw progress on stderr.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ProgressWhen {
    /// only when stderr is a terminal
    #[default]
    Auto,
    /// always (also into a pipe or file)
    Always,
    /// never
    Never,
}

/// The progress flags of the long-running commands.
#[derive(Args, Debug, Default)]
pub struct ProgressArgs {
    /// no progress bar on stderr (same as --progress never)
    #[arg(long)]
    pub no_progress: bool,
    /// when to draw a progress bar on stderr
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ProgressWhen::Auto)]
    pub progress: ProgressWhen,
}

impl ProgressArgs {
    pub fn when(&self) -> ProgressWhen {
        if self.no_progress {
            ProgressWhen::Never
        } else {
            self.progress
        }
    }
}

/// What `run` and `compare` simulate.
#[derive(Args, Debug, Default)]
pub struct SimArgs {
    /// machine profile: a built-in name (schedlab list platforms), smp:N, or a TOML file
    #[arg(long, value_name = "NAME")]
    pub platform: Option<String>,
    /// kernel string, e.g. 'v6.18+78cde54ea5f0 NO_DELAY_DEQUEUE base_slice_ns=3000000'
    /// (compare: repeat)
    #[arg(long = "kernel", value_name = "SPEC", allow_hyphen_values = true)]
    pub kernels: Vec<String>,
    /// benchmark command line with optional placement (nice=, policy=, slice=, cpus=,
    /// cgroup=) and chrt/taskset/nice/cgexec prefixes; repeatable
    #[arg(long = "workload", value_name = "LINE", allow_hyphen_values = true)]
    pub workloads: Vec<String>,
    /// create a cgroup before the workloads start and write its cpu controller files:
    /// PATH[:KEY=VALUE,...] with keys weight (1..10000), weight_nice (-20..19), idle (0|1),
    /// max ('QUOTA PERIOD' in µs), shares (v1), e.g. /test-A:weight=200; repeatable
    #[arg(long = "cgroup", value_name = "SPEC", allow_hyphen_values = true)]
    pub cgroups: Vec<String>,
    /// a TOML file of [cgroups."/PATH"] tables (keys as for --cgroup), applied before the
    /// --cgroup flags
    #[arg(long = "cgroup-file", value_name = "FILE")]
    pub cgroup_file: Option<String>,
    /// simulated time (10s, 500ms); default: until the workloads end if they all end after
    /// work of unknown length (hackbench; one simulated day at most), else the workloads' own
    /// duration, else 10s
    #[arg(long = "duration", value_name = "DUR", value_parser = parse_duration, allow_hyphen_values = true)]
    pub duration_ns: Option<u64>,
    /// master seed (default 1); same inputs and seed give the same bytes
    #[arg(long, value_name = "N", value_parser = parse_seed, allow_hyphen_values = true)]
    pub seed: Option<u64>,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub sim: SimArgs,
    /// write sched tracepoints in the text format of /sys/kernel/tracing/trace (a FIFO,
    /// device or '-' for stdout gets the records without the header, as trace_pipe)
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// refuse a trace expected to be larger than SIZE (e.g. 500M, 4G); without it a trace
    /// expected above 1 GiB gets a warning
    #[arg(long, value_name = "SIZE", value_parser = parse_size, requires = "trace")]
    pub trace_limit: Option<u64>,
    /// print one JSON document instead of text
    #[arg(long)]
    pub json: bool,
    /// check invariants after every event; stop at the first violation
    #[arg(long)]
    pub strict: bool,
    /// record the wakeups of the tasks named COMM and explain the long waits (who ran, why
    /// the wakeup did not preempt); LONG is the wait from which a wakeup counts as long
    /// (default 500us)
    #[arg(long, value_name = "COMM[:LONG]")]
    pub explain_wakeups: Option<String>,
    #[command(flatten)]
    pub progress: ProgressArgs,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    #[command(flatten)]
    pub sim: SimArgs,
    /// seeds per kernel (default 3): seeds SEED, SEED+1, ...
    #[arg(long, value_name = "N", value_parser = parse_runs, allow_hyphen_values = true)]
    pub runs: Option<u32>,
    /// print one JSON document instead of text
    #[arg(long)]
    pub json: bool,
    /// simulations to run at once (default: all cores); results are the same for any N
    #[arg(long, value_name = "N", value_parser = parse_jobs)]
    pub jobs: Option<usize>,
    #[command(flatten)]
    pub progress: ProgressArgs,
}

#[derive(Args, Debug)]
pub struct ReproduceArgs {
    /// scenarios to run: built-in names (schedlab list scenarios) or scenario TOML files
    /// (default: all built-in)
    #[arg(value_name = "NAME")]
    pub names: Vec<String>,
    /// seeds per configuration (default 10, quick 3)
    #[arg(long, value_name = "N", value_parser = parse_runs, allow_hyphen_values = true)]
    pub runs: Option<u32>,
    /// shorter runs: fewer seeds and shorter workloads
    #[arg(long)]
    pub quick: bool,
    /// print one JSON document instead of text
    #[arg(long)]
    pub json: bool,
    /// also write an HTML report into DIR: DIR/SCENARIO.html per scenario (tables, figures,
    /// notes, targets) and DIR/index.html; self-contained pages, no external resources
    #[arg(long, value_name = "DIR")]
    pub html: Option<PathBuf>,
    /// simulations to run at once (default: all cores); results are the same for any N
    #[arg(long, value_name = "N", value_parser = parse_jobs)]
    pub jobs: Option<usize>,
    /// sweep scenarios (next-buddy): run hackbench at the published -l instead of scaling a
    /// shorter run
    #[arg(long)]
    pub full_size: bool,
    /// sweep scenarios: compare the scaled hackbench time with the published -l (1 and 12
    /// groups; 1, 12, 48 and 296 with --full-size) instead of reproducing
    #[arg(long)]
    pub check_scaling: bool,
    /// sweep scenarios: run only these benchmarks' tables (comma-separated: hackbench,
    /// dbench, schbench)
    #[arg(long, value_name = "LIST", value_parser = parse_only)]
    pub only: Option<u8>,
    #[command(flatten)]
    pub progress: ProgressArgs,
}

fn parse_only(v: &str) -> Result<u8, String> {
    schedlab::scenario_sweep::parse_only(v)
}

fn parse_jobs(v: &str) -> Result<usize, String> {
    match v.parse::<usize>() {
        Ok(n) if (1..=1024).contains(&n) => Ok(n),
        _ => Err(format!(
            "'{v}': a number of simultaneous runs from 1 to 1024"
        )),
    }
}

fn parse_duration(v: &str) -> Result<u64, String> {
    let d = schedlab::parse_duration(v).map_err(|e| e.to_string())?;
    if d.0 == 0 {
        return Err("must be greater than 0".into());
    }
    Ok(d.0)
}

fn parse_seed(v: &str) -> Result<u64, String> {
    v.parse()
        .map_err(|_| format!("expected a non-negative integer, got '{v}'"))
}

fn parse_runs(v: &str) -> Result<u32, String> {
    let n: u32 = v
        .parse()
        .map_err(|_| format!("expected a positive integer, got '{v}'"))?;
    if n == 0 {
        return Err("must be at least 1".into());
    }
    Ok(n)
}

/// A size in bytes: a number with an optional K, M, G or T suffix (powers of 1024; a trailing
/// `B`/`iB` is accepted).
pub fn parse_size(v: &str) -> Result<u64, String> {
    let t = v.trim();
    let t = t
        .strip_suffix("iB")
        .or_else(|| t.strip_suffix('B'))
        .unwrap_or(t);
    let (num, shift) = match t.chars().last() {
        Some('K' | 'k') => (&t[..t.len() - 1], 10),
        Some('M' | 'm') => (&t[..t.len() - 1], 20),
        Some('G' | 'g') => (&t[..t.len() - 1], 30),
        Some('T' | 't') => (&t[..t.len() - 1], 40),
        _ => (t, 0),
    };
    let n: u64 = num
        .parse()
        .map_err(|_| format!("expected a size such as 500M or 4G, got '{v}'"))?;
    n.checked_mul(1u64 << shift)
        .filter(|&b| b > 0)
        .ok_or_else(|| format!("size '{v}' must be between 1 byte and 16 EiB"))
}

/// Parses argv (without the program name). `Err((code, text))`: code 0 means `text` is help or
/// version output for stdout; code 2 means `text` is the one-line error.
pub fn parse(argv: &[OsString]) -> Result<Cli, (u8, String)> {
    let full = std::iter::once(OsString::from("schedlab")).chain(argv.iter().cloned());
    match Cli::try_parse_from(full) {
        Ok(c) => Ok(c),
        Err(e) => {
            use clap::error::ErrorKind::*;
            match e.kind() {
                DisplayHelp | DisplayVersion | DisplayHelpOnMissingArgumentOrSubcommand => {
                    Err((0, e.render().to_string()))
                }
                // a non-UTF-8 byte where text is expected (anywhere but a --trace path)
                _ if first_non_utf8(argv).is_some() || e.kind() == InvalidUtf8 => {
                    Err((2, non_utf8(argv)))
                }
                _ => Err((2, one_line(&e.render().to_string(), argv))),
            }
        }
    }
}

/// The first argument that is not UTF-8, leaving out the value of `--trace` (a path, which may
/// be any bytes).
fn first_non_utf8(argv: &[OsString]) -> Option<usize> {
    (0..argv.len()).find(|&i| {
        let a = &argv[i];
        a.to_str().is_none()
            && !(i > 0 && argv[i - 1] == "--trace")
            && !a.as_encoded_bytes().starts_with(b"--trace=")
    })
}

/// The error for an argument that is not UTF-8, naming it (lossily) and the flag it belongs to.
fn non_utf8(argv: &[OsString]) -> String {
    let Some(i) = first_non_utf8(argv) else {
        return "an argument is not valid UTF-8".into();
    };
    let shown = argv[i].to_string_lossy();
    let flag = i
        .checked_sub(1)
        .and_then(|j| argv[j].to_str())
        .filter(|p| p.starts_with("--") && !p.contains('=') && !shown.starts_with('-'));
    match flag {
        Some(f) => format!(
            "{f}: value '{shown}' is not valid UTF-8 (argument {})",
            i + 1
        ),
        None => format!("argument {} '{shown}' is not valid UTF-8", i + 1),
    }
}

/// Folds clap's error text (`error: ...`, tips, possible values, usage) into one line: the
/// message and its tips, without the usage block, prefixed by the command when there is one.
pub fn one_line(rendered: &str, argv: &[OsString]) -> String {
    let mut parts: Vec<String> = Vec::new();
    for line in rendered.lines() {
        let l = line.trim();
        if l.starts_with("Usage:") || l.starts_with("For more information") {
            break;
        }
        if l.is_empty() {
            continue;
        }
        parts.push(l.strip_prefix("error: ").unwrap_or(l).to_string());
    }
    let msg = parts.join("; ");
    let cmd = argv
        .first()
        .and_then(|a| a.to_str())
        .filter(|c| Cli::command().find_subcommand(c).is_some());
    match cmd {
        Some(c) => format!("{c}: {msg} (try 'schedlab help {c}')"),
        None => format!("{msg} (try 'schedlab help')"),
    }
}

/// `schedlab help [COMMAND]`: the text, or the error for an unknown command.
pub fn help(topic: Option<&str>) -> Result<String, String> {
    let mut cmd = Cli::command();
    match topic {
        None => Ok(cmd.render_help().to_string()),
        Some(t) => match cmd.find_subcommand_mut(t) {
            Some(sub) => {
                let mut sub = sub.clone().bin_name(format!("schedlab {t}"));
                Ok(sub.render_help().to_string())
            }
            None => Err(format!(
                "help: unknown command '{t}' (commands: {})",
                Cli::command()
                    .get_subcommands()
                    .map(|s| s.get_name().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        },
    }
}

/// `schedlab completions SHELL`
pub fn completions(shell: clap_complete::Shell) -> Vec<u8> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "schedlab", &mut out);
    out
}

/// `schedlab man`: the man page (roff) of the top-level command with every subcommand.
pub fn man() -> std::io::Result<Vec<u8>> {
    let cmd = Cli::command();
    let mut out = Vec::new();
    let man = clap_mangen::Man::new(cmd.clone());
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    man.render_options_section(&mut out)?;
    man.render_subcommands_section(&mut out)?;
    // every subcommand's flags, one section each
    for sub in cmd.get_subcommands() {
        if sub.get_arguments().all(|a| a.is_hide_set()) {
            continue;
        }
        let name = format!("schedlab {}", sub.get_name());
        out.extend_from_slice(format!(".SH \"{}\"\n", name.to_uppercase()).as_bytes());
        clap_mangen::Man::new(sub.clone()).render_options_section(&mut out)?;
    }
    man.render_extra_section(&mut out)?;
    man.render_version_section(&mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(a: &[&str]) -> Result<Cli, (u8, String)> {
        parse(&a.iter().map(OsString::from).collect::<Vec<_>>())
    }

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn run_flags() {
        let c = p(&[
            "run",
            "--platform",
            "smp:2",
            "--kernel=v6.18",
            "--workload",
            "rt-app x.json",
            "--duration",
            "2s",
            "--json",
        ])
        .unwrap();
        let Some(Cmd::Run(r)) = c.command else {
            panic!("not run")
        };
        assert_eq!(r.sim.platform.as_deref(), Some("smp:2"));
        assert_eq!(r.sim.kernels, vec!["v6.18"]);
        assert_eq!(r.sim.duration_ns, Some(2_000_000_000));
        assert!(r.json);
        assert_eq!(r.progress.when(), ProgressWhen::Auto);
    }

    #[test]
    fn errors_are_one_line_and_name_the_problem() {
        for (args, needle) in [
            (vec!["frob"], "'frob'"),
            (vec!["run", "--bogus"], "'--bogus'"),
            (vec!["run", "--duration", "x"], "--duration"),
            (vec!["run", "--duration", "0s"], "greater than 0"),
            (vec!["run", "--seed", "-3"], "--seed"),
            (vec!["run", "--kernel"], "--kernel"),
            (vec!["list", "--trace", "x"], "'--trace'"),
            (vec!["run", "stray"], "'stray'"),
            (vec!["compare", "--runs", "0"], "at least 1"),
            (vec!["list", "nothing"], "kernels"),
            (vec!["run", "--trace-limit", "1G"], "--trace"),
            (vec!["run", "--trace", "t", "--trace-limit", "x"], "500M"),
        ] {
            let (code, e) = p(&args).unwrap_err();
            assert_eq!(code, 2, "{args:?}");
            assert!(e.contains(needle), "{args:?}: {e}");
            assert!(!e.contains('\n'), "{args:?}: {e}");
        }
    }

    #[test]
    fn help_for_every_command_and_unknown_topic_refused() {
        for sub in Cli::command().get_subcommands() {
            let h = help(Some(sub.get_name())).unwrap();
            assert!(h.contains(&format!("schedlab {}", sub.get_name())), "{h}");
            // a heading is followed by at least one entry: no empty "Options:" block
            let lines: Vec<&str> = h.lines().collect();
            for (i, l) in lines.iter().enumerate() {
                if l.ends_with(':') && !l.starts_with(' ') && !l.starts_with("Exit") {
                    let next = lines.get(i + 1).copied().unwrap_or("");
                    assert!(next.starts_with("  "), "empty heading '{l}' in help {h}");
                }
            }
        }
        assert!(help(Some("nosuch")).unwrap_err().contains("'nosuch'"));
    }

    #[test]
    fn progress_flags() {
        let c = p(&["reproduce", "--no-progress"]).unwrap();
        let Some(Cmd::Reproduce(r)) = c.command else {
            panic!()
        };
        assert_eq!(r.progress.when(), ProgressWhen::Never);
        let c = p(&["reproduce", "--progress=always"]).unwrap();
        let Some(Cmd::Reproduce(r)) = c.command else {
            panic!()
        };
        assert_eq!(r.progress.when(), ProgressWhen::Always);
    }

    #[test]
    fn sizes() {
        // powers of 1024
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("500M"), Ok(500 << 20));
        assert_eq!(parse_size("4GiB"), Ok(4 << 30));
        assert_eq!(parse_size("123"), Ok(123));
        assert!(parse_size("0").is_err());
        assert!(parse_size("99999999999T").is_err());
        assert!(parse_size("lots").is_err());
    }

    #[test]
    fn non_utf8_names_the_flag() {
        use std::os::unix::ffi::OsStringExt;
        let argv = vec![
            OsString::from("run"),
            OsString::from("--workload"),
            OsString::from_vec(b"rt-app \xff.json".to_vec()),
        ];
        let (code, e) = parse(&argv).unwrap_err();
        assert_eq!(code, 2);
        assert!(e.contains("--workload") && e.contains("UTF-8"), "{e}");
    }
}
