//! The command prefixes users type in front of a benchmark: util-linux `chrt` and `taskset`,
//! coreutils `nice`, libcgroup `cgexec`.
//! Each reads its own options and arguments and sets what it would set on the task before it
//! `execvp()`s the rest of the line, so they nest (`taskset -c 0 chrt -f 80 cyclictest ...`)
//! and mix with the placement tokens (`nice=5 taskset 0x3 hackbench`); a later setting
//! replaces an earlier one, as the last `sched_setattr`/`sched_setaffinity` would.
//!
//! `chrt [options] [PRIORITY] COMMAND ...` (util-linux `schedutils/chrt.c`, read for this):
//!
//! | option | effect |
//! |---|---|
//! | `-f`, `--fifo` / `-r`, `--rr` | SCHED_FIFO / SCHED_RR (SCHED_RR is chrt's default policy) |
//! | `-o`, `--other` / `-b`, `--batch` / `-i`, `--idle` | SCHED_OTHER / SCHED_BATCH / SCHED_IDLE (priority 0) |
//! | `-d`, `--deadline` | SCHED_DEADLINE (priority 0) |
//! | `-T`, `--sched-runtime NS`; `-D`, `--sched-deadline NS`; `-P`, `--sched-period NS` | SCHED_DEADLINE parameters in ns; a missing deadline is the period, a missing runtime the deadline (chrt), period 0 = deadline (kernel) |
//! | `-o -T NS` / `-b -T NS` | the custom slice of a SCHED_OTHER/SCHED_BATCH task (`sched_attr.sched_runtime`; util-linux master's `supports_custom_slice`); the kernel clamps it to 0.1..100 ms. Without `-T`, chrt with a fair policy resets the slice to the default, as its `sched_setattr` with runtime 0 does |
//! | `-v`, `--verbose`; `-a`, `--all-tasks` | accepted (nothing printed; `-a` only matters with `-p`) |
//! | `-p`, `--pid`; `-m`, `--max`; `-h`; `-V` | refused: they act on an existing pid or print and exit, no command runs |
//! | `-R`, `--reset-on-fork` | refused: the kernel model does not reset a child's policy at fork yet |
//! | `-G`, `--reclaim-grub` | SCHED_FLAG_RECLAIM (GRUB reclaiming); SCHED_DEADLINE only, as chrt checks (util-linux master since 81c2eb294, May 2026; no release yet in the sources read) |
//!
//! Options come before the priority (chrt's getopt string starts with `+`); long options may
//! be abbreviated as getopt_long allows. The priority must be 1..99 for FIFO/RR and 0 for the
//! others (`sched_get_priority_min/max`); for SCHED_OTHER/BATCH/IDLE/DEADLINE it may be left
//! out, as newer util-linux releases allow. Deviation: numbers are read strictly.
//!
//! `taskset [options] MASK COMMAND ...` / `taskset -c LIST COMMAND ...` (util-linux
//! `schedutils/taskset.c`): MASK is hexadecimal with or without `0x` (commas between 32-bit
//! groups are allowed), LIST a cpulist (`0-3,8-11:2`). `-a` is accepted; `-p`, `-h`, `-V` are
//! refused. Deviation: the real kernel keeps the CPUs of a mask that exist and refuses only a
//! mask with none; schedlab refuses any CPU the platform does not have (the run checks this).
//!
//! `cgexec [-g CONTROLLERS:PATH]... [--sticky] COMMAND ...` (libcgroup `src/tools/cgexec.c`,
//! getopt string `+g:sh`): moves the task to PATH of each hierarchy whose CONTROLLERS (a comma
//! list) are named before it `exec`s the command. schedlab models one cgroup v2 hierarchy with
//! the cpu controller: `-g cpu:/a`, `-g cpu,cpuacct:/a` and `-g '*:/a'` place the task in `/a`
//! (created if missing, like `cgroup=`; real cgexec needs it to exist); a list without `cpu`
//! (`-g memory:/a`) leaves the task's cpu group unchanged, as on a cgroup v1 system, with a
//! note; the last `-g` naming cpu wins. PATH may leave out the leading `/` (libcgroup
//! appends it to the mount point either way). `--sticky` (a cgrulesengd flag) is accepted and
//! has no effect; `-h` is refused, and so is a cgexec without `-g` (it would classify by
//! `/etc/cgrules.conf`).
//!
//! `nice [-n N | --adjustment=N | -N] COMMAND ...` (coreutils): adds N (default 10) to the
//! niceness so far (0, or the line's `nice=`), clamped to -20..19 as `setpriority()` clamps.
//! Permissions (a negative adjustment needs CAP_SYS_NICE) are not modelled.

use schedlab_platform::cpumask::CPULIST_MAX_CPU;
use schedlab_platform::CpuMask;
use schedlab_sched::deadline::checkparam_dl;
use schedlab_sched::sched::Policy;
use schedlab_sched::DlAttr;

use crate::workload::{Placement, WorkloadError};

/// The words of the prefix read so far (for error messages).
fn token(words: &[String], start: usize, end: usize) -> String {
    words[start..end.min(words.len())].join(" ")
}

fn err(line: &str, tok: String, message: impl Into<String>) -> WorkloadError {
    WorkloadError::Placement {
        line: line.to_string(),
        token: tok,
        message: message.into(),
    }
}

/// Resolves a long option (exact name, or an unambiguous prefix as getopt_long allows).
fn long_option<'a>(name: &str, all: &[&'a str]) -> Result<&'a str, String> {
    if let Some(n) = all.iter().find(|n| **n == name) {
        return Ok(n);
    }
    let hits: Vec<&&str> = all
        .iter()
        .filter(|n| !name.is_empty() && n.starts_with(name))
        .collect();
    match hits.len() {
        1 => Ok(hits[0]),
        0 => Err(format!("unrecognized option '--{name}'")),
        _ => Err(format!(
            "option '--{name}' is ambiguous (could be {})",
            hits.iter()
                .map(|h| format!("--{h}"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// One option of a prefix command: its short letter and whether it takes a value.
struct Opt {
    short: char,
    long: &'static str,
    value: bool,
}

const fn opt(short: char, long: &'static str, value: bool) -> Opt {
    Opt { short, long, value }
}

const CHRT_OPTS: &[Opt] = &[
    opt('a', "all-tasks", false),
    opt('b', "batch", false),
    opt('d', "deadline", false),
    opt('f', "fifo", false),
    opt('i', "idle", false),
    opt('p', "pid", false),
    opt('h', "help", false),
    opt('m', "max", false),
    opt('o', "other", false),
    opt('r', "rr", false),
    opt('T', "sched-runtime", true),
    opt('P', "sched-period", true),
    opt('D', "sched-deadline", true),
    opt('R', "reset-on-fork", false),
    opt('G', "reclaim-grub", false),
    opt('v', "verbose", false),
    opt('V', "version", false),
];

const TASKSET_OPTS: &[Opt] = &[
    opt('a', "all-tasks", false),
    opt('c', "cpu-list", false),
    opt('p', "pid", false),
    opt('h', "help", false),
    opt('V', "version", false),
];

/// Reads getopt-style options starting at `words[j]` up to the first non-option word (or
/// after `--`); returns `(letter, spelling, value)` triples and the index of the first
/// operand.
#[allow(clippy::type_complexity)]
fn scan(
    prog: &str,
    opts: &[Opt],
    words: &[String],
    mut j: usize,
) -> Result<(Vec<(char, String, Option<String>)>, usize), (usize, String)> {
    let mut out = Vec::new();
    let longs: Vec<&str> = opts.iter().map(|o| o.long).collect();
    while j < words.len() {
        let w = words[j].as_str();
        if w == "--" {
            j += 1;
            break;
        }
        if let Some(body) = w.strip_prefix("--") {
            let (name, attached) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (body, None),
            };
            let long = long_option(name, &longs).map_err(|m| (j, format!("{prog}: {m}")))?;
            let o = opts.iter().find(|o| o.long == long).expect("listed");
            let value = if o.value {
                match attached {
                    Some(v) => Some(v),
                    None => {
                        j += 1;
                        Some(words.get(j).cloned().ok_or_else(|| {
                            (j, format!("{prog}: option '--{long}' requires an argument"))
                        })?)
                    }
                }
            } else if let Some(v) = attached {
                return Err((
                    j,
                    format!("{prog}: option '--{long}' doesn't allow an argument, got '{v}'"),
                ));
            } else {
                None
            };
            out.push((o.short, format!("--{long}"), value));
            j += 1;
            continue;
        }
        if w.len() > 1 && w.starts_with('-') {
            let chars: Vec<char> = w[1..].chars().collect();
            let mut k = 0;
            while k < chars.len() {
                let c = chars[k];
                let o = opts
                    .iter()
                    .find(|o| o.short == c)
                    .ok_or_else(|| (j, format!("{prog}: invalid option -- '{c}'")))?;
                if o.value {
                    let rest: String = chars[k + 1..].iter().collect();
                    let v = if !rest.is_empty() {
                        rest
                    } else {
                        j += 1;
                        words.get(j).cloned().ok_or_else(|| {
                            (j, format!("{prog}: option requires an argument -- '{c}'"))
                        })?
                    };
                    out.push((c, format!("-{c}"), Some(v)));
                    break;
                }
                out.push((c, format!("-{c}"), None));
                k += 1;
            }
            j += 1;
            continue;
        }
        break;
    }
    Ok((out, j))
}

/// A strictly read non-negative integer (util-linux `strtou64_or_err`, without its silent
/// acceptance of nothing else).
fn strict_u64(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// A strictly read integer with an optional sign (`strtos32_or_err`).
fn strict_i32(s: &str) -> Option<i32> {
    let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// `chrt` at `words[start]`: sets the policy on `p` and returns the index of the command word.
pub(crate) fn chrt(
    line: &str,
    words: &[String],
    start: usize,
    p: &mut Placement,
) -> Result<usize, WorkloadError> {
    let (opts, mut j) = scan("chrt", CHRT_OPTS, words, start + 1)
        .map_err(|(at, m)| err(line, token(words, start, at + 1), m))?;
    let mut policy = Policy::Rr;
    let (mut runtime, mut deadline, mut period) = (0u64, 0u64, 0u64);
    let mut sched_flags = 0u64;
    for (c, spelled, value) in &opts {
        let here = || token(words, start, j);
        match c {
            'f' => policy = Policy::Fifo,
            'r' => policy = Policy::Rr,
            'o' => policy = Policy::Normal,
            'b' => policy = Policy::Batch,
            'i' => policy = Policy::Idle,
            'd' => policy = Policy::Deadline,
            'a' | 'v' => {}
            'G' => sched_flags |= schedlab_sched::deadline::SCHED_FLAG_RECLAIM,
            'p' => {
                return Err(err(
                    line,
                    here(),
                    format!(
                        "chrt {spelled}: changes the policy of an existing pid; a workload line \
                         uses the command form `chrt [options] PRIORITY COMMAND ...`"
                    ),
                ))
            }
            'h' | 'm' | 'V' => {
                return Err(err(
                    line,
                    here(),
                    format!("chrt {spelled}: prints information and exits; no command would run"),
                ))
            }
            'R' => {
                return Err(err(
                    line,
                    here(),
                    format!(
                        "chrt {spelled}: reset-on-fork is not modelled yet (the kernel model \
                         does not reset a child's policy at fork)"
                    ),
                ))
            }
            'T' | 'D' | 'P' => {
                let v = value.as_deref().unwrap_or("");
                let n = strict_u64(v).ok_or_else(|| {
                    let what = match c {
                        'T' => "runtime",
                        'D' => "deadline",
                        _ => "period",
                    };
                    err(
                        line,
                        here(),
                        format!(
                            "chrt {spelled}: invalid {what} argument: '{v}' (an integer in ns)"
                        ),
                    )
                })?;
                match c {
                    'T' => runtime = n,
                    'D' => deadline = n,
                    _ => period = n,
                }
            }
            _ => unreachable!("every chrt option is handled"),
        }
    }
    // PRIORITY (optional for the policies whose only priority is 0)
    let rt = matches!(policy, Policy::Fifo | Policy::Rr);
    let priority = match words.get(j).map(String::as_str) {
        None => {
            return Err(err(
                line,
                token(words, start, j),
                "chrt: bad usage: no priority and command follow",
            ))
        }
        Some(w) => match strict_i32(w) {
            Some(n) => {
                j += 1;
                n
            }
            None if !rt => 0,
            None => {
                return Err(err(
                    line,
                    token(words, start, j + 1),
                    format!(
                        "chrt: invalid priority argument: '{w}' ({} needs a priority 1..99 \
                         before the command)",
                        policy.name()
                    ),
                ))
            }
        },
    };
    let tok = token(words, start, j);
    if j >= words.len() {
        return Err(err(
            line,
            tok,
            "chrt: bad usage: no command after the priority",
        ));
    }
    // util-linux master (supports_runtime_param): -T is a custom slice for SCHED_OTHER and
    // SCHED_BATCH, a reservation for SCHED_DEADLINE; -D/-P are SCHED_DEADLINE only
    if runtime != 0 && !matches!(policy, Policy::Normal | Policy::Batch | Policy::Deadline) {
        return Err(err(
            line,
            tok,
            format!(
                "chrt: --sched-runtime option is supported for SCHED_OTHER, SCHED_BATCH and \
                 SCHED_DEADLINE (not {})",
                policy.name()
            ),
        ));
    }
    if (deadline != 0 || period != 0) && policy != Policy::Deadline {
        return Err(err(
            line,
            tok,
            "chrt: --sched-{deadline,period} options are supported for SCHED_DEADLINE only",
        ));
    }
    if sched_flags != 0 && policy != Policy::Deadline {
        return Err(err(
            line,
            tok,
            "chrt: --reclaim-grub is only supported for SCHED_DEADLINE",
        ));
    }
    if policy == Policy::Deadline {
        // chrt: runtime <= deadline <= period, so a missing deadline is the period and a
        // missing runtime the deadline; the kernel checks the rest.
        if deadline == 0 {
            deadline = period;
        }
        if runtime == 0 {
            runtime = deadline;
        }
    }
    let (min, max) = if rt { (1, 99) } else { (0, 0) };
    if priority < min || priority > max {
        return Err(err(
            line,
            tok,
            format!(
                "chrt: unsupported priority value for the policy: {priority} ({} takes {})",
                policy.name(),
                if rt { "1..99" } else { "only 0" }
            ),
        ));
    }
    set_policy(
        line,
        &tok,
        p,
        policy,
        priority as u32,
        (runtime, deadline, period),
    )?;
    p.dl_flags = sched_flags;
    if policy.is_fair() {
        // chrt calls sched_setattr() with sched_runtime = -T (0 without it); for a fair
        // policy __setscheduler_params() makes a non-zero runtime the custom slice (the kernel
        // clamps it to 0.1..100 ms) and a zero one resets the slice to the default
        p.slice_ns = (runtime != 0).then_some(runtime);
    }
    Ok(j)
}

/// Applies a policy to the placement after the kernel's `sched_setattr` checks.
pub(crate) fn set_policy(
    line: &str,
    tok: &str,
    p: &mut Placement,
    policy: Policy,
    rt_priority: u32,
    dl: (u64, u64, u64),
) -> Result<(), WorkloadError> {
    p.policy = Some(policy);
    p.rt_priority = None;
    p.dl = None;
    p.dl_flags = 0;
    match policy {
        Policy::Fifo | Policy::Rr => p.rt_priority = Some(rt_priority),
        Policy::Deadline => {
            let attr = DlAttr {
                runtime: dl.0,
                deadline: dl.1,
                period: dl.2,
                sched_flags: 0,
            };
            checkparam_dl(&attr).map_err(|m| {
                err(
                    line,
                    tok.to_string(),
                    format!("sched_setattr(SCHED_DEADLINE) refused: {m}"),
                )
            })?;
            p.dl = Some(dl);
        }
        _ => {}
    }
    p.policy_src = Some(tok.to_string());
    Ok(())
}

const CGEXEC_OPTS: &[Opt] = &[
    opt('g', "", true),
    opt('s', "sticky", false),
    opt('h', "help", false),
];

/// `cgexec` at `words[start]`: sets the cgroup on `p` and returns the index of the command
/// word.
pub(crate) fn cgexec(
    line: &str,
    words: &[String],
    start: usize,
    p: &mut Placement,
) -> Result<usize, WorkloadError> {
    let (opts, j) = scan("cgexec", CGEXEC_OPTS, words, start + 1)
        .map_err(|(at, m)| err(line, token(words, start, at + 1), m))?;
    let tok = token(words, start, j);
    let mut specified = false;
    let mut cpu_path: Option<String> = None;
    for (c, spelled, value) in &opts {
        match c {
            'g' => {
                let v = value.as_deref().unwrap_or("");
                let spec = format!("cgexec {spelled} {v}");
                let Some((controllers, path)) = v.split_once(':') else {
                    return Err(err(
                        line,
                        tok,
                        format!("{spec}: expected <controllers>:<path>, e.g. -g cpu:/test-A"),
                    ));
                };
                let list: Vec<&str> = controllers.split(',').collect();
                if list.iter().any(|c| c.is_empty()) {
                    return Err(err(
                        line,
                        tok,
                        format!("{spec}: empty controller name in '{controllers}'"),
                    ));
                }
                let path = if path.starts_with('/') {
                    path.to_string()
                } else {
                    format!("/{path}")
                };
                schedlab_sched::cgroup::parse_cgroup_path(&path)
                    .map_err(|e| err(line, tok.clone(), format!("{spec}: {}", e.reason)))?;
                specified = true;
                if list.iter().any(|c| *c == "cpu" || *c == "*") {
                    cpu_path = Some(path);
                } else {
                    p.notes.push(format!(
                        "{spec}: no cpu controller named; schedlab models only the cpu \
                         controller, so the task's cpu group is left unchanged"
                    ));
                }
            }
            's' => {}
            _ => {
                return Err(err(
                    line,
                    tok,
                    format!("cgexec {spelled}: prints help and exits; no command would run"),
                ))
            }
        }
    }
    if !specified {
        return Err(err(
            line,
            tok,
            "cgexec: without -g it would place the task by the rules of /etc/cgrules.conf; \
             give -g cpu:/PATH",
        ));
    }
    if j >= words.len() {
        return Err(err(line, tok, "cgexec: no command given"));
    }
    if let Some(path) = cpu_path {
        p.cgroup = Some(path);
    }
    Ok(j)
}

/// `nice` at `words[start]`: adjusts the niceness on `p` and returns the index of the command
/// word.
pub(crate) fn nice(
    line: &str,
    words: &[String],
    start: usize,
    p: &mut Placement,
) -> Result<usize, WorkloadError> {
    let mut j = start + 1;
    let mut adj: i64 = 10;
    let bad_adj = |v: &str, j: usize| {
        err(
            line,
            token(words, start, j + 1),
            format!("nice: invalid adjustment '{v}'"),
        )
    };
    let read = |v: &str, j: usize| -> Result<i64, WorkloadError> {
        let digits = v.strip_prefix(['-', '+']).unwrap_or(v);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad_adj(v, j));
        }
        // coreutils clamps huge adjustments too
        Ok(v.parse::<i64>()
            .unwrap_or(if v.starts_with('-') { -40 } else { 40 }))
    };
    while let Some(w) = words.get(j) {
        let w = w.as_str();
        if w == "--" {
            j += 1;
            break;
        }
        if let Some(v) = w.strip_prefix("--adjustment=").or_else(|| {
            w.strip_prefix("--")
                .and_then(|b| b.split_once('='))
                .filter(|(n, _)| !n.is_empty() && "adjustment".starts_with(n))
                .map(|(_, v)| v)
        }) {
            adj = read(v, j)?;
            j += 1;
        } else if w.len() > 2 && w.starts_with("--") && "--adjustment".starts_with(w) {
            j += 1;
            let v = words.get(j).ok_or_else(|| {
                err(
                    line,
                    token(words, start, j),
                    "nice: option '--adjustment' requires an argument",
                )
            })?;
            adj = read(v, j)?;
            j += 1;
        } else if w == "-n" {
            j += 1;
            let v = words.get(j).ok_or_else(|| {
                err(
                    line,
                    token(words, start, j),
                    "nice: option requires an argument -- 'n'",
                )
            })?;
            adj = read(v, j)?;
            j += 1;
        } else if let Some(v) = w.strip_prefix("-n") {
            adj = read(v, j)?;
            j += 1;
        } else if w.len() > 1
            && w.starts_with('-')
            && w[1..]
                .trim_start_matches('-')
                .bytes()
                .all(|b| b.is_ascii_digit())
            && !w[1..].trim_start_matches('-').is_empty()
        {
            // the obsolete form: -ADJUST (`nice -19 CMD`, `nice --5 CMD`)
            adj = read(&w[1..], j)?;
            j += 1;
        } else if w.starts_with('-') && w.len() > 1 {
            return Err(err(
                line,
                token(words, start, j + 1),
                format!(
                    "nice: {w}: not a workload prefix option (-n N, --adjustment=N or -N;                      --help and --version print and exit)"
                ),
            ));
        } else {
            break;
        }
    }
    if j >= words.len() {
        return Err(err(
            line,
            token(words, start, j),
            "nice: no command given (without one nice only prints the niceness)",
        ));
    }
    let cur = i64::from(p.nice.unwrap_or(0));
    p.nice = Some((cur + adj).clamp(-20, 19) as i32);
    Ok(j)
}

/// A `taskset` hexadecimal mask (`0x` optional, commas between groups ignored).
fn parse_mask(s: &str) -> Result<CpuMask, String> {
    let hex = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    let digits: Vec<char> = hex.chars().filter(|&c| c != ',').collect();
    if digits.is_empty() || !digits.iter().all(|c| c.is_ascii_hexdigit()) {
        return Err(format!("failed to parse CPU mask: '{s}'"));
    }
    let mut m = CpuMask::new();
    for (k, c) in digits.iter().rev().enumerate() {
        let nib = c.to_digit(16).expect("hex digit");
        for b in 0..4 {
            if nib & (1 << b) != 0 {
                let cpu = 4 * k + b;
                if cpu > CPULIST_MAX_CPU {
                    return Err(format!(
                        "CPU mask '{s}' names CPU {cpu}, above {CPULIST_MAX_CPU}"
                    ));
                }
                m.set(cpu);
            }
        }
    }
    Ok(m)
}

/// `taskset` at `words[start]`: sets the affinity on `p` and returns the index of the command
/// word.
pub(crate) fn taskset(
    line: &str,
    words: &[String],
    start: usize,
    p: &mut Placement,
) -> Result<usize, WorkloadError> {
    let (opts, j) = scan("taskset", TASKSET_OPTS, words, start + 1)
        .map_err(|(at, m)| err(line, token(words, start, at + 1), m))?;
    let mut list = false;
    for (c, spelled, _) in &opts {
        let here = || token(words, start, j);
        match c {
            'c' => list = true,
            'a' => {}
            'p' => {
                return Err(err(
                    line,
                    here(),
                    format!(
                        "taskset {spelled}: changes the affinity of an existing pid; a workload \
                         line uses the command form `taskset [-c] MASK|LIST COMMAND ...`"
                    ),
                ))
            }
            _ => {
                return Err(err(
                    line,
                    here(),
                    format!(
                        "taskset {spelled}: prints information and exits; no command would run"
                    ),
                ))
            }
        }
    }
    let Some(arg) = words.get(j) else {
        return Err(err(
            line,
            token(words, start, j),
            "taskset: bad usage: no CPU mask and command follow",
        ));
    };
    let tok = token(words, start, j + 1);
    let mask = if list {
        CpuMask::parse_cpulist(arg).map_err(|e| err(line, tok.clone(), format!("taskset: {e}")))?
    } else {
        parse_mask(arg).map_err(|m| err(line, tok.clone(), format!("taskset: {m}")))?
    };
    if mask.is_empty() {
        return Err(err(
            line,
            tok,
            format!(
                "taskset: '{arg}' selects no CPU (sched_setaffinity fails with EINVAL: empty \
                 CPU set)"
            ),
        ));
    }
    if j + 1 >= words.len() {
        return Err(err(
            line,
            tok,
            "taskset: bad usage: no command after the CPU set",
        ));
    }
    p.cpus = Some(mask);
    p.cpus_src = Some(tok);
    Ok(j + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::parse_placement;

    fn ok(line: &str) -> (Placement, Vec<String>) {
        parse_placement(line).unwrap_or_else(|e| panic!("{line}: {e}"))
    }

    fn bad(line: &str) -> String {
        parse_placement(line).unwrap_err().to_string()
    }

    #[test]
    fn chrt_policies_and_priorities() {
        let (p, w) = ok("chrt -f 95 cyclictest -D 1");
        assert_eq!((p.policy, p.rt_priority), (Some(Policy::Fifo), Some(95)));
        assert_eq!(w, vec!["cyclictest", "-D", "1"]);
        assert_eq!(p.policy_src.as_deref(), Some("chrt -f 95"));
        // chrt's default policy is SCHED_RR
        let (p, _) = ok("chrt 10 hackbench");
        assert_eq!((p.policy, p.rt_priority), (Some(Policy::Rr), Some(10)));
        let (p, _) = ok("chrt -r 10 hackbench");
        assert_eq!((p.policy, p.rt_priority), (Some(Policy::Rr), Some(10)));
        let (p, _) = ok("chrt --fifo 1 hackbench");
        assert_eq!((p.policy, p.rt_priority), (Some(Policy::Fifo), Some(1)));
        let (p, _) = ok("chrt --rr 99 hackbench");
        assert_eq!((p.policy, p.rt_priority), (Some(Policy::Rr), Some(99)));
        // abbreviated long options, clustered short ones, `--`
        let (p, _) = ok("chrt --fi -v 7 hackbench");
        assert_eq!((p.policy, p.rt_priority), (Some(Policy::Fifo), Some(7)));
        let (p, _) = ok("chrt -vf -- 7 hackbench");
        assert_eq!((p.policy, p.rt_priority), (Some(Policy::Fifo), Some(7)));
        for (line, pol) in [
            ("chrt -o 0 hackbench", Policy::Normal),
            ("chrt --other hackbench", Policy::Normal),
            ("chrt -b 0 hackbench", Policy::Batch),
            ("chrt --batch hackbench", Policy::Batch),
            ("chrt -i 0 hackbench", Policy::Idle),
            ("chrt --idle hackbench", Policy::Idle),
        ] {
            let (p, w) = ok(line);
            assert_eq!((p.policy, p.rt_priority), (Some(pol), None), "{line}");
            assert_eq!(w, vec!["hackbench"], "{line}");
        }
        // a later prefix wins, as the last sched_setscheduler() would
        let (p, _) = ok("policy=fifo:50 chrt -o 0 hackbench");
        assert_eq!((p.policy, p.rt_priority), (Some(Policy::Normal), None));
    }

    #[test]
    fn chrt_deadline() {
        let (p, w) = ok(
            "chrt -d --sched-runtime 5000000 --sched-deadline 10000000 --sched-period 20000000 \
             0 rt-app x.json",
        );
        assert_eq!(p.policy, Some(Policy::Deadline));
        assert_eq!(p.dl, Some((5_000_000, 10_000_000, 20_000_000)));
        assert_eq!(w, vec!["rt-app", "x.json"]);
        assert_eq!(p.dl_flags, 0);
        // util-linux chrt -G / --reclaim-grub: SCHED_FLAG_RECLAIM (0x02) in sched_flags
        for line in [
            "chrt -d -G -T 2000000 -P 10000000 0 rt-app x.json",
            "chrt --deadline --reclaim-grub -T 2000000 -P 10000000 0 rt-app x.json",
        ] {
            let (p, _) = ok(line);
            assert_eq!(p.dl_flags, 0x02, "{line}");
            assert_eq!(
                p.attrs("rt-app", None).dl.map(|a| a.sched_flags),
                Some(0x02)
            );
        }
        // a later policy prefix replaces the flags with its own (none)
        let (p, _) = ok("chrt -d -G -P 10000000 0 chrt -d -P 10000000 0 rt-app x.json");
        assert_eq!(p.dl_flags, 0);
        // short options with attached values; chrt fills deadline from period, runtime from
        // deadline
        let (p, _) = ok("chrt -d -P1000000 0 rt-app x.json");
        assert_eq!(p.dl, Some((1_000_000, 1_000_000, 1_000_000)));
        let (p, _) = ok("chrt -d -T 200000 -P 1000000 rt-app x.json");
        assert_eq!(p.dl, Some((200_000, 1_000_000, 1_000_000)));
        let (p, _) =
            ok("chrt --deadline --sched-runtime=300000 --sched-deadline=900000 0 rt-app x.json");
        assert_eq!(p.dl, Some((300_000, 900_000, 0)));
    }

    #[test]
    fn taskset_masks_and_lists() {
        let (p, w) = ok("taskset -c 0-2,5 hackbench -g 1");
        assert_eq!(p.cpus, Some(CpuMask::parse_cpulist("0-2,5").unwrap()));
        assert_eq!(p.cpus_src.as_deref(), Some("taskset -c 0-2,5"));
        assert_eq!(w, vec!["hackbench", "-g", "1"]);
        let (p, _) = ok("taskset --cpu-list 1 hackbench");
        assert_eq!(p.cpus, Some(CpuMask::single(1)));
        // 0x13 = CPUs 0, 1 and 4; a mask without 0x is hexadecimal too
        let (p, _) = ok("taskset 0x13 hackbench");
        assert_eq!(p.cpus, Some(CpuMask::parse_cpulist("0,1,4").unwrap()));
        let (p, _) = ok("taskset 10 hackbench");
        assert_eq!(p.cpus, Some(CpuMask::single(4)));
        // 32-bit groups: bit 32 is CPU 32
        let (p, _) = ok("taskset 1,00000000 hackbench");
        assert_eq!(p.cpus, Some(CpuMask::single(32)));
    }

    #[test]
    fn nice_adjusts_and_clamps() {
        let n = |line: &str| ok(line).0.nice;
        assert_eq!(n("nice make -j8"), Some(10));
        assert_eq!(n("nice -n 19 make -j80"), Some(19));
        assert_eq!(n("nice -n19 make"), Some(19));
        assert_eq!(n("nice --adjustment=-5 make"), Some(-5));
        assert_eq!(n("nice --adj 3 make"), Some(3));
        assert_eq!(n("nice -19 make"), Some(19));
        assert_eq!(n("nice --5 make"), Some(-5));
        // relative to what the line set before; setpriority() clamps to -20..19
        assert_eq!(n("nice=5 nice -n 10 make"), Some(15));
        assert_eq!(n("nice -n 30 make"), Some(19));
        assert_eq!(n("nice -n -99 make"), Some(-20));
        assert_eq!(n("nice nice make"), Some(19));
        let (p, w) = ok("nice -n 19 chrt --idle 0 taskset -c 1 hackbench");
        assert_eq!((p.nice, p.policy), (Some(19), Some(Policy::Idle)));
        assert_eq!(w, vec!["hackbench"]);
        for (line, needle) in [
            ("nice -n x make", "invalid adjustment 'x'"),
            ("nice -n", "requires an argument"),
            ("nice -n 5", "no command"),
            ("nice --help", "--help"),
        ] {
            let e = bad(line);
            assert!(e.contains(needle), "{line}: {e}");
        }
    }

    #[test]
    fn prefixes_nest_and_mix_with_placement_tokens() {
        let (p, w) = ok("taskset -c 0 chrt -f 80 cyclictest -D 1");
        assert_eq!((p.policy, p.rt_priority), (Some(Policy::Fifo), Some(80)));
        assert_eq!(p.cpus, Some(CpuMask::single(0)));
        assert_eq!(w, vec!["cyclictest", "-D", "1"]);
        let (p, w) = ok("nice=5 chrt -r 3 cpus=1 taskset 0x4 slice=3ms schbench");
        assert_eq!((p.policy, p.rt_priority), (Some(Policy::Rr), Some(3)));
        assert_eq!((p.nice, p.slice_ns), (Some(5), Some(3_000_000)));
        // the innermost affinity wins
        assert_eq!(p.cpus, Some(CpuMask::single(2)));
        assert_eq!(w, vec!["schbench"]);
        let (p, _) = ok("chrt -f 10 taskset -c 1 chrt --rr 20 hackbench");
        assert_eq!((p.policy, p.rt_priority), (Some(Policy::Rr), Some(20)));
    }

    /// util-linux master's chrt: `-T` with SCHED_OTHER/SCHED_BATCH is the custom slice
    /// (`sched_attr.sched_runtime`); chrt with a fair policy and no `-T` passes runtime 0,
    /// which resets the slice to the default (`__setscheduler_params`).
    #[test]
    fn chrt_custom_slice_of_a_fair_task() {
        let (p, w) = ok("chrt -o --sched-runtime 8000000 0 cyclictest -D 1");
        assert_eq!(
            (p.policy, p.slice_ns),
            (Some(Policy::Normal), Some(8_000_000))
        );
        assert_eq!(w[0], "cyclictest");
        let (p, _) = ok("chrt -b -T 3000000 hackbench");
        assert_eq!(
            (p.policy, p.slice_ns),
            (Some(Policy::Batch), Some(3_000_000))
        );
        // the placement token and chrt: the innermost setting wins
        let (p, _) = ok("slice=20ms chrt -o -T 8000000 0 hackbench");
        assert_eq!(p.slice_ns, Some(8_000_000));
        let (p, _) = ok("slice=20ms chrt -o 0 hackbench");
        assert_eq!(p.slice_ns, None);
        let (p, _) = ok("chrt -o -T 8000000 0 slice=20ms hackbench");
        assert_eq!(p.slice_ns, Some(20_000_000));
        // an RT policy keeps the slice asked for before (only fair policies touch it)
        let (p, _) = ok("slice=20ms chrt -f 10 hackbench");
        assert_eq!(p.slice_ns, Some(20_000_000));
    }

    /// libcgroup cgexec: `-g CONTROLLERS:PATH`, the last one naming cpu wins; a list without
    /// cpu leaves the cpu group alone with a note; `--sticky` is accepted.
    #[test]
    fn cgexec_places_the_task_in_a_cgroup() {
        let (p, w) = ok("cgexec -g cpu:/test-A hackbench -T");
        assert_eq!(p.cgroup.as_deref(), Some("/test-A"));
        assert_eq!(w, vec!["hackbench", "-T"]);
        for line in [
            "cgexec -g cpu,cpuacct:/a/b x",
            "cgexec -gcpu:/a/b x",
            "cgexec --sticky -g *:a/b x",
            "cgexec -g cpu:/z -g cpu:/a/b x",
            "cgexec -g cpu:/a/b -g memory:/m x",
            "cgroup=/z cgexec -g cpu:/a/b x",
        ] {
            let (p, w) = ok(line);
            assert_eq!(p.cgroup.as_deref(), Some("/a/b"), "{line}");
            assert_eq!(w, vec!["x"], "{line}");
        }
        let (p, _) = ok("cgexec -g memory:/m x");
        assert_eq!(p.cgroup, None);
        assert_eq!(p.notes.len(), 1);
        assert!(p.notes[0].contains("-g memory:/m"), "{:?}", p.notes);
        // nests with the other prefixes
        let (p, w) = ok("taskset -c 0 cgexec -g cpu:/b chrt -o -T 8000000 0 cyclictest");
        assert_eq!(p.cgroup.as_deref(), Some("/b"));
        assert_eq!(p.slice_ns, Some(8_000_000));
        assert_eq!(p.cpus, Some(CpuMask::single(0)));
        assert_eq!(w, vec!["cyclictest"]);
    }

    #[test]
    fn bad_prefixes_name_the_value() {
        for (line, needles) in [
            (
                "chrt -f 0 cyclictest",
                &["chrt -f 0", "priority value", ": 0"][..],
            ),
            ("chrt -f 100 cyclictest", &["chrt -f 100", ": 100", "1..99"]),
            ("chrt -r 0 cyclictest", &["chrt -r 0", ": 0"]),
            ("chrt -o 5 cyclictest", &["chrt -o 5", ": 5", "only 0"]),
            (
                "chrt -d -T 1000 -P 1000000 0 x",
                &["chrt -d -T 1000 -P 1000000 0", "1000 ns", "1024"],
            ),
            ("chrt -d -T 2000000 -D 1000000 0 x", &["2000000", "exceeds"]),
            ("chrt -d -T 10000 -P 50000 0 x", &["period 50000 ns"]),
            ("chrt -d 0 x", &["sched_deadline must not be 0"]),
            ("chrt -d 5 x", &["chrt -d 5", ": 5"]),
            (
                "chrt -f -T 1000 10 x",
                &[
                    "--sched-runtime",
                    "SCHED_OTHER, SCHED_BATCH and SCHED_DEADLINE",
                ],
            ),
            ("chrt -i -T 1000 x", &["not SCHED_IDLE"]),
            ("chrt -o -P 1000 x", &["SCHED_DEADLINE only"]),
            ("cgexec x", &["cgexec", "-g cpu:/PATH"]),
            (
                "cgexec -g cpu x",
                &["cgexec -g cpu", "<controllers>:<path>"],
            ),
            ("cgexec -g cpu:/a//b x", &["cpu:/a//b", "empty component"]),
            ("cgexec -g ,cpu:/a x", &[",cpu:/a", "empty controller"]),
            ("cgexec -g cpu:/a", &["no command"]),
            ("cgexec -h x", &["cgexec -h", "prints help"]),
            ("cgexec -x x", &["invalid option -- 'x'"]),
            ("cgroup=/a/../b x", &["cgroup=/a/../b", "'..'"]),
            ("chrt -d -T 1ms 0 x", &["'1ms'", "runtime"]),
            ("chrt -f cyclictest", &["'cyclictest'", "priority"]),
            ("chrt -f 10", &["chrt -f 10", "no command"]),
            ("chrt", &["chrt", "no priority"]),
            ("chrt -p 10 123", &["chrt -p", "existing pid"]),
            ("chrt -m", &["chrt -m", "prints"]),
            ("chrt -R -f 10 x", &["-R", "reset-on-fork"]),
            (
                "chrt -f -G 10 x",
                &["--reclaim-grub is only supported for SCHED_DEADLINE"],
            ),
            ("chrt -x 10 x", &["invalid option -- 'x'"]),
            (
                "chrt --ver 10 x",
                &["'--ver' is ambiguous", "--verbose", "--version"],
            ),
            ("chrt --sched-runtime", &["requires an argument"]),
            ("chrt --fifo=3 10 x", &["--fifo", "'3'"]),
            ("taskset -c '' x", &["selects no CPU"]),
            ("taskset 0 x", &["taskset 0", "'0' selects no CPU"]),
            ("taskset 0xg x", &["'0xg'"]),
            ("taskset -c 3-1 x", &["taskset -c 3-1", "backwards"]),
            ("taskset -c 0", &["no command"]),
            ("taskset -p 1 123", &["existing pid"]),
            ("taskset", &["no CPU mask"]),
        ] {
            let e = bad(line);
            assert!(!e.contains('\n'), "{e}");
            for n in needles {
                assert!(e.contains(n), "{line}: {e:?} lacks {n:?}");
            }
        }
    }
}
