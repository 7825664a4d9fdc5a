//! Command-line flags, defined once as data; parsing and help text come from the table.

use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Command {
    Run,
    Reproduce,
    Compare,
    List,
    Show,
    Bench,
    #[default]
    Help,
    Version,
}

/// A flag: name, value placeholder (None = switch), commands that accept it, help.
struct Flag {
    name: &'static str,
    value: Option<&'static str>,
    commands: &'static [Command],
    help: &'static str,
}

use Command::*;

const FLAGS: &[Flag] = &[
    Flag { name: "--platform", value: Some("NAME"), commands: &[Run, Compare], help: "machine profile: a built-in name (schedlab list platforms), smp:N, or a TOML file" },
    Flag { name: "--kernel", value: Some("SPEC"), commands: &[Run, Compare], help: "kernel string, e.g. 'v6.18+78cde54ea5f0 NO_DELAY_DEQUEUE base_slice_ns=3000000' (compare: repeat)" },
    Flag { name: "--workload", value: Some("LINE"), commands: &[Run, Compare], help: "benchmark command line with optional placement (nice=, policy=, slice=, cpus=); repeatable" },
    Flag { name: "--duration", value: Some("DUR"), commands: &[Run, Compare], help: "simulated time (10s, 500ms); default: the workloads' own duration, else 10s" },
    Flag { name: "--seed", value: Some("N"), commands: &[Run, Compare], help: "master seed (default 1); same inputs and seed give the same bytes" },
    Flag { name: "--trace", value: Some("FILE"), commands: &[Run], help: "write sched tracepoints in the text format of /sys/kernel/tracing/trace" },
    Flag { name: "--json", value: None, commands: &[Run, Reproduce, Compare], help: "print one JSON document instead of text" },
    Flag { name: "--strict", value: None, commands: &[Run], help: "check invariants after every event; stop at the first violation" },
    Flag { name: "--runs", value: Some("N"), commands: &[Reproduce, Compare], help: "seeds per configuration (reproduce default 10, quick 3; compare default 3)" },
    Flag { name: "--jobs", value: Some("N"), commands: &[Reproduce, Compare], help: "simulations run at once (default: all cores); the output does not depend on it" },
    Flag { name: "--quick", value: None, commands: &[Reproduce, Bench], help: "shorter runs (reproduce: fewer seeds and shorter workloads)" },
    Flag { name: "--no-progress", value: None, commands: &[Run, Reproduce, Compare], help: "no progress bar on stderr" },
];

const COMMANDS: &[(&str, Command, &str)] = &[
    (
        "run",
        Run,
        "simulate one configuration and print the benchmarks' output and a summary",
    ),
    (
        "reproduce",
        Reproduce,
        "run built-in seed reproductions: published vs simulated numbers",
    ),
    (
        "compare",
        Compare,
        "mmtests-style table of several kernels on one workload",
    ),
    (
        "list",
        List,
        "list kernels | patches | features | sysctls | platforms | workloads | scenarios",
    ),
    ("show", Show, "show platform NAME | show kernel SPEC"),
    (
        "bench",
        Bench,
        "bench [pingpong|hogs|smp|stress-ng]...: simulator speed (simulated context switches per wall second)",
    ),
    ("help", Help, "help [COMMAND]"),
];

#[derive(Debug, Default)]
pub struct Parsed {
    pub command: Command,
    pub topic: Option<String>,
    pub positional: Vec<String>,
    pub platform: Option<String>,
    pub kernels: Vec<String>,
    pub workloads: Vec<String>,
    pub duration_ns: Option<u64>,
    pub seed: Option<u64>,
    pub trace: Option<PathBuf>,
    pub json: bool,
    pub strict: bool,
    pub runs: Option<u32>,
    /// `--jobs N`: worker threads for reproduce/compare (None: all cores).
    pub jobs: Option<usize>,
    pub quick: bool,
    pub progress: bool,
}

pub fn parse(argv: &[String]) -> Result<Parsed, String> {
    let mut p = Parsed {
        progress: true,
        ..Default::default()
    };
    let Some(first) = argv.first() else {
        p.command = Help;
        return Ok(p);
    };
    p.command = match first.as_str() {
        "-h" | "--help" => Help,
        "-V" | "--version" => Version,
        name => COMMANDS
            .iter()
            .find(|(n, _, _)| *n == name)
            .map(|(_, c, _)| *c)
            .ok_or_else(|| format!("unknown command '{name}' (try 'schedlab help')"))?,
    };
    let mut i = 1;
    while i < argv.len() {
        let a = &argv[i];
        if a == "-h" || a == "--help" {
            p.topic = Some(first.clone());
            p.command = Help;
            return Ok(p);
        }
        if let Some(body) = a.strip_prefix("--") {
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (format!("--{n}"), Some(v.to_string())),
                None => (a.clone(), None),
            };
            let flag = FLAGS
                .iter()
                .find(|f| f.name == name)
                .ok_or_else(|| format!("{}: unknown flag '{name}'", first))?;
            if !flag.commands.contains(&p.command) {
                return Err(format!(
                    "{first}: flag '{name}' does not apply to this command"
                ));
            }
            let value = if flag.value.is_some() {
                match inline {
                    Some(v) => Some(v),
                    None => {
                        i += 1;
                        Some(argv.get(i).cloned().ok_or_else(|| {
                            format!("{first}: {name} needs a value ({})", flag.value.unwrap())
                        })?)
                    }
                }
            } else {
                if inline.is_some() {
                    return Err(format!("{first}: {name} takes no value"));
                }
                None
            };
            apply(&mut p, &name, value, first)?;
        } else if a.starts_with('-') && a.len() > 1 {
            return Err(format!("{first}: unknown flag '{a}'"));
        } else {
            p.positional.push(a.clone());
        }
        i += 1;
    }
    if p.command == Help {
        p.topic = p.positional.first().cloned();
    }
    if matches!(p.command, Run | Compare) && !p.positional.is_empty() {
        return Err(format!(
            "{first}: unexpected argument '{}'",
            p.positional[0]
        ));
    }
    Ok(p)
}

fn apply(p: &mut Parsed, name: &str, value: Option<String>, cmd: &str) -> Result<(), String> {
    let v = value.unwrap_or_default();
    match name {
        "--platform" => {
            if p.platform.is_some() {
                return Err(format!("{cmd}: --platform given twice"));
            }
            p.platform = Some(v)
        }
        "--kernel" => p.kernels.push(v),
        "--workload" => p.workloads.push(v),
        "--duration" => {
            let d = schedlab::parse_duration(&v).map_err(|e| format!("{cmd}: --duration: {e}"))?;
            if d.0 == 0 {
                return Err(format!("{cmd}: --duration: must be greater than 0"));
            }
            p.duration_ns = Some(d.0)
        }
        "--seed" => {
            p.seed = Some(v.parse().map_err(|_| {
                format!("{cmd}: --seed: expected a non-negative integer, got '{v}'")
            })?)
        }
        "--trace" => p.trace = Some(PathBuf::from(v)),
        "--json" => p.json = true,
        "--strict" => p.strict = true,
        "--runs" => {
            let n: u32 = v
                .parse()
                .map_err(|_| format!("{cmd}: --runs: expected a positive integer, got '{v}'"))?;
            if n == 0 {
                return Err(format!("{cmd}: --runs: must be at least 1"));
            }
            p.runs = Some(n)
        }
        "--jobs" => {
            let n: usize = v
                .parse()
                .map_err(|_| format!("{cmd}: --jobs: expected a positive integer, got '{v}'"))?;
            if n == 0 {
                return Err(format!("{cmd}: --jobs: must be at least 1"));
            }
            p.jobs = Some(n)
        }
        "--quick" => p.quick = true,
        "--no-progress" => p.progress = false,
        _ => unreachable!("flag table and apply() disagree on {name}"),
    }
    Ok(())
}

/// Help text generated from the tables.
pub fn help(topic: Option<&str>) -> String {
    let mut s = String::new();
    if let Some((name, cmd, about)) = topic.and_then(|t| COMMANDS.iter().find(|(n, _, _)| *n == t))
    {
        s.push_str(&format!("schedlab {name}: {about}\n\nFlags:\n"));
        for f in FLAGS.iter().filter(|f| f.commands.contains(cmd)) {
            let n = match f.value {
                Some(v) => format!("{} {}", f.name, v),
                None => f.name.to_string(),
            };
            s.push_str(&format!("  {:<22} {}\n", n, f.help));
        }
        return s;
    }
    s.push_str("schedlab — a deterministic simulator of the Linux CPU scheduler\n\nUsage: schedlab COMMAND [FLAGS]\n\nCommands:\n");
    for (n, _, about) in COMMANDS {
        s.push_str(&format!("  {:<10} {}\n", n, about));
    }
    s.push_str("\nExamples:\n  schedlab reproduce\n  schedlab run --platform smp:1 --kernel v6.18 --workload 'rt-app examples/two-hogs.json' --duration 10s\n  schedlab compare --platform rpi5 --kernel v6.6 --kernel v6.12 --workload 'stress-ng --pipe 4 --timeout 20s' --runs 5\n\n'schedlab help COMMAND' lists the flags of a command.\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn run_flags() {
        let p = parse(&v(&[
            "run",
            "--platform",
            "smp:2",
            "--kernel=v6.18",
            "--workload",
            "rt-app x.json",
            "--duration",
            "2s",
            "--json",
        ]))
        .unwrap();
        assert_eq!(p.command, Run);
        assert_eq!(p.platform.as_deref(), Some("smp:2"));
        assert_eq!(p.kernels, vec!["v6.18"]);
        assert_eq!(p.duration_ns, Some(2_000_000_000));
        assert!(p.json);
    }

    #[test]
    fn errors_are_one_line_and_name_the_problem() {
        for (args, needle) in [
            (vec!["frob"], "unknown command 'frob'"),
            (vec!["run", "--bogus"], "unknown flag '--bogus'"),
            (vec!["run", "--duration", "x"], "--duration"),
            (vec!["run", "--duration", "0s"], "greater than 0"),
            (vec!["run", "--seed", "-3"], "--seed"),
            (vec!["run", "--kernel"], "needs a value"),
            (vec!["list", "--trace", "x"], "does not apply"),
            (vec!["run", "stray"], "unexpected argument 'stray'"),
            (
                vec!["reproduce", "--jobs", "0"],
                "--jobs: must be at least 1",
            ),
            (
                vec!["compare", "--jobs", "two"],
                "--jobs: expected a positive integer, got 'two'",
            ),
            (vec!["run", "--jobs", "2"], "does not apply"),
        ] {
            let e = parse(&v(&args)).unwrap_err();
            assert!(e.contains(needle), "{e}");
            assert!(!e.contains('\n'));
        }
    }

    #[test]
    fn every_flag_is_handled() {
        for f in FLAGS {
            let cmd = COMMANDS
                .iter()
                .find(|(_, c, _)| *c == f.commands[0])
                .unwrap()
                .0;
            let mut a = vec![cmd.to_string(), f.name.to_string()];
            if f.value.is_some() {
                a.push(match f.name {
                    "--duration" => "1s".into(),
                    "--seed" | "--runs" | "--jobs" => "3".into(),
                    _ => "x".into(),
                });
            }
            parse(&a).unwrap();
        }
    }
}
