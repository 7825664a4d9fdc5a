//! dbench 4 command line (workloads.md §7.1; popt options of `dbench.c`, gormanm fork for
//! `--show-execute-time`).
//!
//! | option | modelled |
//! |---|---|
//! | `N` (clients) | yes: N client processes |
//! | `-t`, `--timelimit SECS` | yes (default 600) |
//! | `--warmup SECS` | yes (default: timelimit / 5) |
//! | `-c`, `--loadfile NAME\|FILE` | yes: built-in `client-tiny` / `client-warmup` ([`super::loadfile`]), or a dbench loadfile read from disk |
//! | `-D`, `--directory DIR` | accepted (the file system is the platform's XFS device) |
//! | `--show-execute-time` | yes |
//! | `--run-once` | yes: each client stops after one pass |
//! | `--skip-cleanup` | yes: no cleanup line |
//! | `-T`, `--tcp-options OPTS` | tbench only (`crate::tbench`); dbench: error |
//! | `-B`, `-s`, `-S`, `-F`, `-R`, `-x`, … | not modelled (error) |

use crate::cmdline::{self, ArgKind, OptionError, Scanner, Spec, Style};

/// A parsed dbench command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub clients: u32,
    pub timelimit_secs: u32,
    pub warmup_secs: u32,
    /// As given (`client-tiny.txt`, a path), `None` = the default.
    pub loadfile: Option<String>,
    pub directory: String,
    pub show_execute_time: bool,
    pub run_once: bool,
    pub skip_cleanup: bool,
    /// `-T`, `--tcp-options` (tbench only): the socket options as given.
    pub tcp_options: Option<String>,
    pub warnings: Vec<String>,
}

pub const PROG: &str = "dbench";
pub const DEFAULT_TIMELIMIT: u32 = 600;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Time,
    Warmup,
    Loadfile,
    Dir,
    ShowExec,
    RunOnce,
    SkipCleanup,
    TcpOptions,
    NotModelled(&'static str),
    Help,
}

use ArgKind::{None as NoArg, Required as Req};

const SPECS: &[Spec<Key>] = &[
    Spec::new(Some('t'), Some("timelimit"), Req, Key::Time),
    Spec::new(None, Some("warmup"), Req, Key::Warmup),
    Spec::new(Some('c'), Some("loadfile"), Req, Key::Loadfile),
    Spec::new(Some('D'), Some("directory"), Req, Key::Dir),
    Spec::new(None, Some("show-execute-time"), NoArg, Key::ShowExec),
    Spec::new(None, Some("run-once"), NoArg, Key::RunOnce),
    Spec::new(None, Some("skip-cleanup"), NoArg, Key::SkipCleanup),
    Spec::new(Some('h'), Some("help"), NoArg, Key::Help),
    Spec::new(
        Some('B'),
        Some("backend"),
        Req,
        Key::NotModelled("backends other than fileio"),
    ),
    Spec::new(
        Some('s'),
        Some("sync"),
        NoArg,
        Key::NotModelled("O_SYNC writes"),
    ),
    Spec::new(
        Some('S'),
        Some("sync-dir"),
        NoArg,
        Key::NotModelled("synchronous directory operations"),
    ),
    Spec::new(
        Some('F'),
        Some("fsync"),
        NoArg,
        Key::NotModelled("fsync after every write"),
    ),
    Spec::new(
        Some('R'),
        Some("target-rate"),
        Req,
        Key::NotModelled("rate pacing"),
    ),
    Spec::new(
        Some('x'),
        Some("xattr"),
        NoArg,
        Key::NotModelled("extended attributes"),
    ),
    Spec::new(Some('T'), Some("tcp-options"), Req, Key::TcpOptions),
];

/// Parses the words after `dbench`.
pub fn parse(args: &[String]) -> Result<Options, OptionError> {
    let (o, rest) = parse_common(PROG, args)?;
    if let Some(extra) = rest.first() {
        return Err(OptionError::UnexpectedArgument {
            program: PROG,
            arg: extra.clone(),
        });
    }
    // the parent plus one process per client
    cmdline::check_tasks(PROG, &format!("N = {}", o.clients), 1 + o.clients as u128)?;
    Ok(o)
}

/// The options dbench and tbench share (`prog` is the program for messages; `-T` is
/// tbench's only): the options and the positional words after N.
pub(crate) fn parse_common(
    prog: &'static str,
    args: &[String],
) -> Result<(Options, Vec<String>), OptionError> {
    let style = Style {
        abbreviations: false,
        negation: false,
    };
    let mut o = Options {
        clients: 0,
        timelimit_secs: DEFAULT_TIMELIMIT,
        warmup_secs: 0,
        loadfile: None,
        directory: ".".to_string(),
        show_execute_time: false,
        run_once: false,
        skip_cleanup: false,
        tcp_options: None,
        warnings: Vec::new(),
    };
    let mut warmup: Option<u32> = None;
    let mut sc = Scanner::new(prog, SPECS, style, args);
    while let Some(found) = sc.next_option() {
        let found = found?;
        let value = cmdline::required(&found).to_string();
        match found.key {
            Key::Time => {
                o.timelimit_secs = cmdline::positive_u32(prog, &found.spelled, &value)?;
                cmdline::check_run_secs(prog, &found.spelled, &value, o.timelimit_secs as u128)?;
            }
            Key::Warmup => {
                let w = cmdline::non_negative_u32(prog, &found.spelled, &value)?;
                cmdline::check_run_secs(prog, &found.spelled, &value, w as u128)?;
                warmup = Some(w);
            }
            Key::Loadfile => o.loadfile = Some(value),
            Key::Dir => o.directory = value,
            Key::ShowExec => o.show_execute_time = true,
            Key::RunOnce => o.run_once = true,
            Key::SkipCleanup => o.skip_cleanup = true,
            Key::TcpOptions if prog == "tbench" => o.tcp_options = Some(value),
            Key::TcpOptions => {
                return Err(OptionError::NotModelled {
                    program: prog,
                    option: found.spelled,
                    detail: "network backends (that is tbench)".to_string(),
                })
            }
            Key::Help => {
                return Err(OptionError::NotModelled {
                    program: prog,
                    option: found.spelled,
                    detail: "help output".to_string(),
                })
            }
            Key::NotModelled(what) => {
                return Err(OptionError::NotModelled {
                    program: prog,
                    option: found.spelled,
                    detail: what.to_string(),
                })
            }
        }
    }
    // dbench.c: a warm-up of a fifth of the time limit unless --warmup is given
    o.warmup_secs = warmup.unwrap_or(o.timelimit_secs / 5);
    let pos = sc.positionals();
    let Some(n) = pos.first() else {
        return Err(OptionError::Invalid {
            program: prog,
            message: format!("the number of clients is missing ({prog} [options] N)"),
        });
    };
    o.clients = cmdline::positive_u32(prog, "N (clients)", n)?;
    let rest = pos[1..].to_vec();
    Ok((o, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Options, OptionError> {
        parse(&s.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn mmtests_command_line() {
        let o = p("-D /mnt --warmup 0 -t 120 --loadfile client-tiny.txt --show-execute-time 48")
            .unwrap();
        assert_eq!(o.clients, 48);
        assert_eq!((o.timelimit_secs, o.warmup_secs), (120, 0));
        assert_eq!(o.loadfile.as_deref(), Some("client-tiny.txt"));
        assert_eq!(o.directory, "/mnt");
        assert!(o.show_execute_time && !o.run_once && !o.skip_cleanup);
        // the warm-up step
        let o = p("--run-once --skip-cleanup --loadfile client-warmup.txt 4").unwrap();
        assert!(o.run_once && o.skip_cleanup);
        // default warm-up: a fifth of the time limit (600 s → 120 s; -t 10 → 2 s)
        assert_eq!(p("1").unwrap().warmup_secs, 120);
        assert_eq!(p("-t 10 1").unwrap().warmup_secs, 2);
    }

    #[test]
    fn errors_name_the_value() {
        let e = p("-t 0 4").unwrap_err().to_string();
        assert!(e.contains("-t") && e.contains("'0'"), "{e}");
        let e = p("-t ten 4").unwrap_err().to_string();
        assert!(e.contains("'ten'"), "{e}");
        let e = p("--warmup -1 4").unwrap_err().to_string();
        assert!(e.contains("--warmup") && e.contains("'-1'"), "{e}");
        let e = p("x").unwrap_err().to_string();
        assert!(e.contains("'x'"), "{e}");
        let e = p("0").unwrap_err().to_string();
        assert!(e.contains("'0'"), "{e}");
        let e = p("-t 5").unwrap_err().to_string();
        assert!(e.contains("number of clients"), "{e}");
        let e = p("-F 4").unwrap_err().to_string();
        assert!(e.contains("-F") && e.contains("not modelled"), "{e}");
        let e = p("--bogus 4").unwrap_err().to_string();
        assert!(e.contains("--bogus"), "{e}");
        let e = p("4 5").unwrap_err().to_string();
        assert!(e.contains("'5'"), "{e}");
        let e = p("40000").unwrap_err().to_string();
        assert!(e.contains("40000"), "{e}");
    }
}
