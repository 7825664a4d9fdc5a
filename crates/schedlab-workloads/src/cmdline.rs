//! Command-line machinery shared by the benchmark front ends: the [`OptionError`] every
//! `parse` returns, a getopt_long-style [`Scanner`] driven by a per-program option table, and
//! strict number readers.
//!
//! The scanner reproduces the parts of glibc `getopt_long` (and of perf's `parse-options`,
//! which behaves the same way for the forms used here) that real command lines rely on:
//!
//! * short options, clustered (`-Lq`), with the value attached (`-t16`) or in the next word
//!   (`-t 16`);
//! * long options as `--name=value` or `--name value` (required arguments only; an optional
//!   argument must be attached with `=`, exactly as getopt requires);
//! * unambiguous abbreviations of long options (`--mlock` for `--mlockall`) when the table
//!   is complete enough to decide ambiguity (the caller says so);
//! * `--` ends the options; other words are positional and the scan goes on past them
//!   (getopt's argument permutation).
//!
//! Deviation: numbers are read strictly. Where the real programs use `atoi`/`strtol` and
//! silently ignore trailing garbage (`-l 100x` is 100 to hackbench), schedlab rejects the
//! value with an error naming the option: a simulated run must not silently differ from what
//! the user meant.

use thiserror::Error;

/// A command-line problem, naming the program, the option as the user spelled it and the
/// reason. Never a panic: every malformed input ends here.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum OptionError {
    /// The real program has no such option.
    #[error("{program}: unknown option '{option}'")]
    Unknown {
        program: &'static str,
        option: String,
    },
    /// An abbreviated long option matches several options.
    #[error("{program}: option '{option}' is ambiguous (could be {candidates})")]
    Ambiguous {
        program: &'static str,
        option: String,
        candidates: String,
    },
    /// The option needs a value and none was given.
    #[error("{program}: {option}: requires an argument")]
    MissingValue {
        program: &'static str,
        option: String,
    },
    /// A flag was given a value with `--flag=value`.
    #[error("{program}: {option}: takes no argument, got '{value}'")]
    UnexpectedValue {
        program: &'static str,
        option: String,
        value: String,
    },
    /// The value is malformed or out of the real program's range.
    #[error("{program}: {option}: {reason}")]
    BadValue {
        program: &'static str,
        option: String,
        reason: String,
    },
    /// The real program has this option but schedlab does not model its effect.
    #[error("{program}: {option}: not modelled by schedlab ({detail})")]
    NotModelled {
        program: &'static str,
        option: String,
        detail: String,
    },
    /// A positional word the program would reject.
    #[error("{program}: unexpected argument '{arg}'")]
    UnexpectedArgument { program: &'static str, arg: String },
    /// A combination of options the real program rejects.
    #[error("{program}: {message}")]
    Invalid {
        program: &'static str,
        message: String,
    },
}

/// Whether an option takes a value (getopt's `no_argument` / `required_argument` /
/// `optional_argument`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgKind {
    None,
    Required,
    Optional,
}

/// One row of a program's option table. `key` identifies the option to the caller; rows that
/// share a key are the same option (a short and a long spelling may also share one row).
#[derive(Debug, Clone, Copy)]
pub struct Spec<K> {
    pub short: Option<char>,
    pub long: Option<&'static str>,
    pub arg: ArgKind,
    pub key: K,
}

impl<K> Spec<K> {
    pub const fn new(
        short: Option<char>,
        long: Option<&'static str>,
        arg: ArgKind,
        key: K,
    ) -> Self {
        Spec {
            short,
            long,
            arg,
            key,
        }
    }
}

/// Parsing conventions that differ between programs.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    /// Accept unambiguous prefixes of long options (glibc getopt_long, perf parse-options).
    /// Only safe when the table lists every long option of the real program.
    pub abbreviations: bool,
    /// Accept `--no-NAME` for options without an argument (perf parse-options).
    pub negation: bool,
}

/// One option occurrence found by the [`Scanner`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found<K> {
    pub key: K,
    /// The option as written, without any value: `-t`, `--threads`, `--no-pipe`.
    pub spelled: String,
    pub value: Option<String>,
    /// `--no-NAME` form (only with [`Style::negation`]).
    pub negated: bool,
}

/// A getopt_long-style scanner over `args` (the words after the program name).
pub struct Scanner<'a, K> {
    program: &'static str,
    specs: &'a [Spec<K>],
    style: Style,
    args: &'a [String],
    next: usize,
    /// Remaining characters of a short-option cluster (`-abc` after `a`).
    cluster: Option<String>,
    positionals: Vec<String>,
    only_positionals: bool,
}

impl<'a, K: Copy + PartialEq> Scanner<'a, K> {
    pub fn new(
        program: &'static str,
        specs: &'a [Spec<K>],
        style: Style,
        args: &'a [String],
    ) -> Self {
        Scanner {
            program,
            specs,
            style,
            args,
            next: 0,
            cluster: None,
            positionals: Vec::new(),
            only_positionals: false,
        }
    }

    /// The next option, `None` at the end of the words.
    pub fn next_option(&mut self) -> Option<Result<Found<K>, OptionError>> {
        if let Some(rest) = self.cluster.take() {
            return Some(self.short_option(rest));
        }
        loop {
            let word = self.args.get(self.next)?;
            self.next += 1;
            if self.only_positionals {
                self.positionals.push(word.clone());
                continue;
            }
            if word == "--" {
                self.only_positionals = true;
                continue;
            }
            if let Some(body) = word.strip_prefix("--") {
                return Some(self.long_option(body));
            }
            if word.len() > 1 && word.starts_with('-') {
                return Some(self.short_option(word[1..].to_string()));
            }
            self.positionals.push(word.clone());
        }
    }

    /// Takes the next word if `accept` likes it. This reproduces programs that read an
    /// optional argument from the following word themselves (cyclictest `-t 4`, `-a 2`); the
    /// real getopt leaves the word in place as a positional, which those programs ignore, so
    /// consuming it is equivalent.
    pub fn take_next_if(&mut self, accept: impl Fn(&str) -> bool) -> Option<String> {
        if self.cluster.is_some() || self.only_positionals {
            return None;
        }
        let word = self.args.get(self.next)?;
        if accept(word) {
            self.next += 1;
            Some(word.clone())
        } else {
            None
        }
    }

    /// Positional words seen so far (all of them once `next_option` returned `None`).
    pub fn positionals(&self) -> &[String] {
        &self.positionals
    }

    fn short_option(&mut self, cluster: String) -> Result<Found<K>, OptionError> {
        let mut chars = cluster.chars();
        let c = chars.next().expect("short option cluster is never empty");
        let rest: String = chars.collect();
        let spelled = format!("-{c}");
        let Some(spec) = self.specs.iter().find(|s| s.short == Some(c)) else {
            return Err(OptionError::Unknown {
                program: self.program,
                option: spelled,
            });
        };
        let value = match spec.arg {
            ArgKind::None => {
                if !rest.is_empty() {
                    self.cluster = Some(rest);
                }
                None
            }
            ArgKind::Optional => (!rest.is_empty()).then_some(rest),
            ArgKind::Required => {
                if !rest.is_empty() {
                    Some(rest)
                } else if let Some(v) = self.args.get(self.next) {
                    self.next += 1;
                    Some(v.clone())
                } else {
                    return Err(OptionError::MissingValue {
                        program: self.program,
                        option: spelled,
                    });
                }
            }
        };
        Ok(Found {
            key: spec.key,
            spelled,
            value,
            negated: false,
        })
    }

    fn long_option(&mut self, body: &str) -> Result<Found<K>, OptionError> {
        let (name, attached) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };
        let (spec, negated) = match self.lookup_long(name)? {
            Some(spec) => (spec, false),
            None => {
                let negatable = self
                    .style
                    .negation
                    .then(|| name.strip_prefix("no-"))
                    .flatten()
                    .map(|base| self.lookup_long(base))
                    .transpose()?
                    .flatten()
                    .filter(|s| s.arg == ArgKind::None);
                match negatable {
                    Some(spec) => (spec, true),
                    None => {
                        return Err(OptionError::Unknown {
                            program: self.program,
                            option: format!("--{name}"),
                        })
                    }
                }
            }
        };
        let spelled = format!("--{name}");
        let value = match (spec.arg, attached) {
            (ArgKind::None, Some(v)) => {
                return Err(OptionError::UnexpectedValue {
                    program: self.program,
                    option: spelled,
                    value: v,
                })
            }
            (ArgKind::None, None) => None,
            (ArgKind::Optional, v) => v,
            (ArgKind::Required, Some(v)) => Some(v),
            (ArgKind::Required, None) => match self.args.get(self.next) {
                Some(v) => {
                    self.next += 1;
                    Some(v.clone())
                }
                None => {
                    return Err(OptionError::MissingValue {
                        program: self.program,
                        option: spelled,
                    })
                }
            },
        };
        Ok(Found {
            key: spec.key,
            spelled,
            value,
            negated,
        })
    }

    /// Exact match first; then, if allowed, the unique option (by key) the prefix names.
    fn lookup_long(&self, name: &str) -> Result<Option<&'a Spec<K>>, OptionError> {
        let specs: &'a [Spec<K>] = self.specs;
        if let Some(s) = specs.iter().find(|s| s.long == Some(name)) {
            return Ok(Some(s));
        }
        if !self.style.abbreviations || name.is_empty() {
            return Ok(None);
        }
        let mut hits: Vec<&'a Spec<K>> = Vec::new();
        for s in specs {
            if s.long.is_some_and(|l| l.starts_with(name)) && !hits.iter().any(|h| h.key == s.key) {
                hits.push(s);
            }
        }
        match hits.len() {
            0 => Ok(None),
            1 => Ok(Some(hits[0])),
            _ => Err(OptionError::Ambiguous {
                program: self.program,
                option: format!("--{name}"),
                candidates: hits
                    .iter()
                    .map(|s| format!("--{}", s.long.unwrap_or_default()))
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }
}

/// Longest run a command line may ask for (`--timeout`, `-D`, `-l` × interval), in seconds:
/// 2^33 s ≈ 272 years. Simulated time is `u64` nanoseconds (≈ 584 years); the cap leaves room
/// for the start-up and tear-down margins the models add to a run length, so that none of
/// them overflows. Deviation: the real programs accept longer runs.
pub const MAX_RUN_SECS: u64 = schedlab_engine::MAX_SIM_SECS;

/// Most tasks one command line may create: `PID_MAX_DEFAULT` (32768), the default `pid_max`
/// of a machine with up to 32 CPUs, beyond which the real program's `fork()`/`clone()` fails.
/// It also bounds the simulator's memory (a few KiB per task) so that a typo such as
/// `-g 4294967295` is an error rather than an allocation failure or an endless set-up.
pub const MAX_TASKS: u64 = 32_768;

/// Checks a task count computed from the options named in `options` (e.g. `"-g 1000 -f 20"`).
/// `tasks` is computed in `u128` by the caller, so it cannot have overflowed.
pub fn check_tasks(program: &'static str, options: &str, tasks: u128) -> Result<(), OptionError> {
    if tasks > MAX_TASKS as u128 {
        return Err(OptionError::Invalid {
            program,
            message: format!(
                "{options}: {tasks} tasks, more than the {MAX_TASKS} a default pid_max allows"
            ),
        });
    }
    Ok(())
}

/// Checks a run length in seconds against [`MAX_RUN_SECS`].
pub fn check_run_secs(
    program: &'static str,
    option: &str,
    value: &str,
    secs: u128,
) -> Result<(), OptionError> {
    if secs > MAX_RUN_SECS as u128 {
        return Err(OptionError::BadValue {
            program,
            option: option.to_string(),
            reason: format!(
                "'{value}' is {secs} s, longer than the {MAX_RUN_SECS} s (≈ 272 years) schedlab \
                 can simulate"
            ),
        });
    }
    Ok(())
}

/// The value of an option that requires one (the scanner guarantees it is present).
pub fn required(found: &Found<impl Copy>) -> &str {
    found.value.as_deref().unwrap_or_default()
}

/// Reads a whole decimal integer (optional sign) and checks `min..=max`. `what` names the
/// expected kind in the error ("a positive integer", "an integer in 0..=99").
pub fn int_in(
    program: &'static str,
    option: &str,
    value: &str,
    min: i64,
    max: i64,
    what: &str,
) -> Result<i64, OptionError> {
    let bad = || OptionError::BadValue {
        program,
        option: option.to_string(),
        reason: format!("expected {what}, got '{value}'"),
    };
    let digits = value.strip_prefix('+').unwrap_or(value);
    let (negative, digits) = match digits.strip_prefix('-') {
        Some(d) if !value.starts_with('+') => (true, d),
        _ => (false, digits),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let magnitude: i64 = digits.parse().map_err(|_| bad())?;
    let v = if negative { -magnitude } else { magnitude };
    if v < min || v > max {
        return Err(bad());
    }
    Ok(v)
}

/// A strictly positive integer that fits in `u32`.
pub fn positive_u32(program: &'static str, option: &str, value: &str) -> Result<u32, OptionError> {
    int_in(
        program,
        option,
        value,
        1,
        u32::MAX as i64,
        "a positive integer",
    )
    .map(|v| v as u32)
}

/// A non-negative integer that fits in `u32`.
pub fn non_negative_u32(
    program: &'static str,
    option: &str,
    value: &str,
) -> Result<u32, OptionError> {
    int_in(
        program,
        option,
        value,
        0,
        u32::MAX as i64,
        "a non-negative integer",
    )
    .map(|v| v as u32)
}

/// C `atoi` on a word, as programs use it to *test* whether the next word is a number
/// (cyclictest `-t 4`): leading blanks, optional sign, digits, anything after ignored;
/// 0 when there are no digits.
pub fn atoi(s: &str) -> i64 {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let mut v: i64 = 0;
    for b in t.bytes() {
        if !b.is_ascii_digit() {
            break;
        }
        v = v.saturating_mul(10).saturating_add((b - b'0') as i64);
    }
    if neg {
        -v
    } else {
        v
    }
}

/// Parses a CPU list `0-3,5` (the syntax of schbench `-M`/`-W` and of cyclictest `-a`) into a
/// sorted, de-duplicated list. `None` if malformed.
pub fn cpu_list(text: &str) -> Option<Vec<u32>> {
    if text.is_empty() {
        return None;
    }
    let mut cpus = Vec::new();
    for part in text.split(',') {
        let num = |s: &str| -> Option<u32> {
            (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
                .then(|| s.parse().ok())
                .flatten()
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if b < a || b - a > 65_535 {
                    return None;
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(num(part)?),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Some(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum K {
        Threads,
        Quiet,
        Lock,
        Aff,
        Mlockall,
        Mainaff,
    }

    const SPECS: &[Spec<K>] = &[
        Spec::new(Some('t'), Some("threads"), ArgKind::Required, K::Threads),
        Spec::new(Some('q'), Some("quiet"), ArgKind::None, K::Quiet),
        Spec::new(Some('L'), Some("no-locking"), ArgKind::None, K::Lock),
        Spec::new(Some('a'), Some("affinity"), ArgKind::Optional, K::Aff),
        Spec::new(Some('m'), Some("mlockall"), ArgKind::None, K::Mlockall),
        Spec::new(None, Some("mainaffinity"), ArgKind::Required, K::Mainaff),
    ];

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn scan(s: &str, abbrev: bool) -> Result<(Vec<Found<K>>, Vec<String>), OptionError> {
        let args = words(s);
        let style = Style {
            abbreviations: abbrev,
            negation: false,
        };
        let mut sc = Scanner::new("prog", SPECS, style, &args);
        let mut out = Vec::new();
        while let Some(f) = sc.next_option() {
            out.push(f?);
        }
        Ok((out, sc.positionals().to_vec()))
    }

    #[test]
    fn short_forms() {
        let (f, _) = scan("-t 4 -t5 -qL", false).unwrap();
        assert_eq!(f[0].value.as_deref(), Some("4"));
        assert_eq!(f[1].value.as_deref(), Some("5"));
        assert_eq!((f[2].key, f[3].key), (K::Quiet, K::Lock));
        assert_eq!(f[3].spelled, "-L");
    }

    #[test]
    fn long_forms_and_positionals() {
        let (f, pos) = scan("--threads=4 x --threads 5 -- -q", false).unwrap();
        assert_eq!(f.len(), 2);
        assert_eq!(f[1].value.as_deref(), Some("5"));
        assert_eq!(pos, vec!["x".to_string(), "-q".to_string()]);
    }

    #[test]
    fn optional_argument_only_attached() {
        let (f, pos) = scan("-a 3 --affinity=1-2 -a4", false).unwrap();
        assert_eq!(f[0].value, None);
        assert_eq!(f[1].value.as_deref(), Some("1-2"));
        assert_eq!(f[2].value.as_deref(), Some("4"));
        assert_eq!(pos, vec!["3".to_string()]);
    }

    #[test]
    fn abbreviations() {
        let (f, _) = scan("--mlock --thr 2", true).unwrap();
        assert_eq!((f[0].key, f[1].key), (K::Mlockall, K::Threads));
        assert!(matches!(
            scan("--m", true),
            Err(OptionError::Ambiguous { .. })
        ));
        assert!(matches!(
            scan("--mlock", false),
            Err(OptionError::Unknown { .. })
        ));
    }

    #[test]
    fn errors() {
        assert_eq!(
            scan("-z", false).unwrap_err().to_string(),
            "prog: unknown option '-z'"
        );
        assert_eq!(
            scan("-t", false).unwrap_err().to_string(),
            "prog: -t: requires an argument"
        );
        assert_eq!(
            scan("--quiet=1", false).unwrap_err().to_string(),
            "prog: --quiet: takes no argument, got '1'"
        );
    }

    #[test]
    fn numbers() {
        assert_eq!(positive_u32("p", "-i", "2777").unwrap(), 2777);
        assert_eq!(
            positive_u32("cyclictest", "-i", "x")
                .unwrap_err()
                .to_string(),
            "cyclictest: -i: expected a positive integer, got 'x'"
        );
        assert!(positive_u32("p", "-i", "0").is_err());
        assert!(positive_u32("p", "-i", "10x").is_err());
        assert_eq!(int_in("p", "-p", "-5", -10, 10, "n").unwrap(), -5);
        assert_eq!(atoi("  12ab"), 12);
        assert_eq!(atoi("-3"), -3);
        assert_eq!(atoi("x1"), 0);
    }

    #[test]
    fn limits() {
        // 32768 tasks is the default pid_max: allowed; one more is not.
        assert!(check_tasks("p", "-g 1", 32_768).is_ok());
        assert_eq!(
            check_tasks("p", "-g 2", 32_769).unwrap_err().to_string(),
            "p: -g 2: 32769 tasks, more than the 32768 a default pid_max allows"
        );
        // 2^33 s fits (8.59 × 10¹⁸ ns < 2^64 ns); one more second is refused.
        assert!(check_run_secs("p", "-D", "x", 1 << 33).is_ok());
        let e = check_run_secs("p", "-D", "x", (1 << 33) + 1).unwrap_err();
        assert!(
            e.to_string().starts_with("p: -D: 'x' is 8589934593 s"),
            "{e}"
        );
        assert!(MAX_RUN_SECS as u128 * 1_000_000_000 * 2 < u64::MAX as u128);
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(cpu_list("0-2,5,1").unwrap(), vec![0, 1, 2, 5]);
        assert!(cpu_list("3-1").is_none());
        assert!(cpu_list("a").is_none());
        assert!(cpu_list("").is_none());
    }
}
