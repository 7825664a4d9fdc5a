//! The `make` command line of a kernel build (workloads.md §8.1).
//!
//! | option | modelled |
//! |---|---|
//! | `-jN`, `-j N`, `--jobs=N`, `--jobs N` | yes: N job slots (the jobserver holds N − 1 tokens); 1..=4096 |
//! | `-j` / `--jobs` without a number | refused: unlimited jobs are not modelled |
//! | none of them | one job at a time, as make's default |
//! | `-s`, `--silent`, `--quiet`, `-k`, `--keep-going` | accepted, no effect (the model prints nothing but the `time` report and never fails) |
//! | `--units=N`, `--units N` | schedlab's own: build N compile units instead of the full 12 000; the serial phases shrink in proportion (tests, quick runs) |
//! | other options, targets, `VAR=value` | refused |

use crate::cmdline::{self, ArgKind, OptionError, Scanner, Spec, Style};

pub const PROG: &str = "make";

/// Compile units of the full build (workloads.md §8.2: a distribution-style configuration with
/// modules).
pub const FULL_UNITS: u32 = 12_000;

/// Most job slots schedlab models (the make process writes N − 1 one-byte tokens into a
/// 16-page pipe; 4 096 keeps the tasks of a full `-j` well under the pid cap).
pub const MAX_JOBS: u32 = 4096;

/// A parsed `make` command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// `-j`: job slots.
    pub jobs: u32,
    /// `--units`: compile units (default [`FULL_UNITS`]).
    pub units: u32,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Jobs,
    Quiet,
    Units,
}

const SPECS: &[Spec<Key>] = &[
    Spec::new(Some('j'), Some("jobs"), ArgKind::Optional, Key::Jobs),
    Spec::new(Some('s'), Some("silent"), ArgKind::None, Key::Quiet),
    Spec::new(None, Some("quiet"), ArgKind::None, Key::Quiet),
    Spec::new(Some('k'), Some("keep-going"), ArgKind::None, Key::Quiet),
    Spec::new(None, Some("units"), ArgKind::Required, Key::Units),
];

fn is_number(w: &str) -> bool {
    !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit())
}

/// Parses the words after `make`.
pub fn parse(args: &[String]) -> Result<Options, OptionError> {
    let style = Style {
        abbreviations: false,
        negation: false,
    };
    let mut o = Options {
        jobs: 1,
        units: FULL_UNITS,
        warnings: Vec::new(),
    };
    let mut sc = Scanner::new(PROG, SPECS, style, args);
    while let Some(found) = sc.next_option() {
        let found = found?;
        match found.key {
            Key::Jobs => {
                // make reads `-j 8` as well as `-j8`: a number in the next word is the value
                let v = match found.value.clone() {
                    Some(v) => Some(v),
                    None => sc.take_next_if(is_number),
                };
                let Some(v) = v else {
                    return Err(OptionError::NotModelled {
                        program: PROG,
                        option: found.spelled,
                        detail: "unlimited jobs (give a number: -jN)".to_string(),
                    });
                };
                o.jobs = cmdline::int_in(
                    PROG,
                    &found.spelled,
                    &v,
                    1,
                    MAX_JOBS as i64,
                    &format!("a job count in 1..={MAX_JOBS}"),
                )? as u32;
            }
            Key::Quiet => {}
            Key::Units => {
                let v = cmdline::required(&found);
                o.units = cmdline::int_in(
                    PROG,
                    &found.spelled,
                    v,
                    1,
                    1_000_000,
                    "a unit count in 1..=1000000",
                )? as u32;
            }
        }
    }
    if let Some(extra) = sc.positionals().first() {
        return Err(OptionError::Invalid {
            program: PROG,
            message: format!(
                "'{extra}': targets and variable assignments are not modelled (the model \
                 builds the default target)"
            ),
        });
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Options, OptionError> {
        parse(&s.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn job_counts_in_every_spelling() {
        assert_eq!(p("").unwrap().jobs, 1); // make's default: one job
        assert_eq!(p("-j8").unwrap().jobs, 8);
        assert_eq!(p("-j 80").unwrap().jobs, 80);
        assert_eq!(p("--jobs=16").unwrap().jobs, 16);
        assert_eq!(p("--jobs 2").unwrap().jobs, 2);
        assert_eq!(p("-s -j4 -k").unwrap().jobs, 4);
        assert_eq!(p("-sj4").unwrap().jobs, 4);
        assert_eq!(p("-j4").unwrap().units, FULL_UNITS);
        assert_eq!(p("-j4 --units=1000").unwrap().units, 1000);
        assert_eq!(p("--units 7 -j1").unwrap().units, 7);
    }

    #[test]
    fn errors_name_the_option_and_value() {
        for (line, needles) in [
            ("-j", &["-j", "unlimited"][..]),
            ("--jobs", &["--jobs", "unlimited"]),
            ("-j0", &["-j", "'0'"]),
            ("-jx", &["-j", "'x'"]),
            ("-j 5000", &["-j", "'5000'"]),
            ("--jobs=-3", &["--jobs", "'-3'"]),
            ("-j4 --units=0", &["--units", "'0'"]),
            ("-j4 --units=many", &["--units", "'many'"]),
            ("-j4 vmlinux", &["'vmlinux'"]),
            ("-j4 V=1", &["'V=1'"]),
            ("-j4 -C /src", &["-C"]),
        ] {
            let e = p(line).unwrap_err().to_string();
            for n in needles {
                assert!(e.contains(n), "{line}: {e}");
            }
        }
        // `-j x`: the next word is not a number, so it is unlimited jobs plus a target
        let e = p("-j x").unwrap_err().to_string();
        assert!(e.contains("unlimited"), "{e}");
    }
}
