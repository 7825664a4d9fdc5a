//! cgroup settings applied before any workload starts: the `[cgroups]` table of scenario files
//! and of `--cgroup-file FILE`, and `--cgroup PATH[:KEY=VALUE,...]` on the command line.
//!
//! One sub-table per group path, with the cpu controller's files under short names:
//!
//! ```text
//! [cgroups."/test-A"]
//! weight = 200            # cpu.weight, 1..10000 (100 = nice 0's 1024)
//! [cgroups."/test-B"]
//! weight_nice = -5        # cpu.weight.nice, -20..19
//! [cgroups."/batch"]
//! idle = 1                # cpu.idle, 0 or 1 (true/false accepted)
//! [cgroups."/limited"]
//! max = "50000 100000"    # cpu.max: "QUOTA PERIOD" in µs, QUOTA may be "max"
//! [cgroups."/v1"]
//! shares = 2048           # cgroup v1 cpu.shares, 2..262144
//! ```
//!
//! Each group is created with `mkdir -p` (its missing parents too) and its files are written in
//! a fixed order — the weight (`weight`, `weight_nice` or `shares`: at most one of them), then
//! `idle`, then `max` — in the order the groups appear, before the workloads' own `cgroup=`
//! groups are made and before any task exists. A group with no key is only created. The
//! values are the text written to the files; the range checks here are the kernel's
//! (`cpu_weight_write_u64()` and friends) so that a mistake is reported with its file and
//! line; whatever else the kernel refuses (`cpu.max` out of range) is reported when the run
//! starts, with the same file and line.

use schedlab_sched::cgroup::{parse_cgroup_path, CGROUP_WEIGHT_MAX, CGROUP_WEIGHT_MIN};
use schedlab_sched::Sys;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use std::ops::Range;

/// One write to a cpu controller file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setting {
    /// The key as the user wrote it (`weight`).
    pub key: &'static str,
    /// The kernel's file (`cpu.weight`).
    pub file: &'static str,
    /// The text written.
    pub value: String,
    /// Where it was given: `FILE:LINE` or `--cgroup VALUE`.
    pub origin: String,
    span: Option<Range<usize>>,
}

/// One group and what is written to its files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    pub path: String,
    pub origin: String,
    pub settings: Vec<Setting>,
    span: Option<Range<usize>>,
}

/// The groups to create, in order. `Default` is none (a run without cgroups).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cgroups {
    pub groups: Vec<Group>,
}

/// The keys of a group's table: (key, kernel file, what it takes).
const KEYS: &[(&str, &str)] = &[
    ("weight", "cpu.weight"),
    ("weight_nice", "cpu.weight.nice"),
    ("shares", "cpu.shares"),
    ("idle", "cpu.idle"),
    ("max", "cpu.max"),
];

const KNOWN: &str = "weight, weight_nice, idle, max, shares";

/// cgroup v1 `cpu.shares` limits (kernel: MIN_SHARES, MAX_SHARES).
const MIN_SHARES: i64 = 2;
const MAX_SHARES: i64 = 1 << 18;

/// Checks one value and returns the text to write to its file.
fn check_value(key: &str, v: &Raw) -> Result<String, String> {
    let int = || match v {
        Raw::Int(i) => Ok(*i),
        Raw::Str(s) => s
            .trim()
            .parse::<i64>()
            .map_err(|_| format!("{key} = {s:?}: expected an integer")),
        Raw::Bool(b) => Err(format!("{key} = {b}: expected an integer")),
    };
    match key {
        "weight" => {
            let w = int()?;
            let (lo, hi) = (CGROUP_WEIGHT_MIN as i64, CGROUP_WEIGHT_MAX as i64);
            if !(lo..=hi).contains(&w) {
                return Err(format!(
                    "weight = {w}: cpu.weight must be {lo}..{hi} (100 = the weight of nice 0)"
                ));
            }
            Ok(w.to_string())
        }
        "weight_nice" => {
            let n = int()?;
            if !(-20..=19).contains(&n) {
                return Err(format!(
                    "weight_nice = {n}: cpu.weight.nice must be -20..19"
                ));
            }
            Ok(n.to_string())
        }
        "shares" => {
            let s = int()?;
            if !(MIN_SHARES..=MAX_SHARES).contains(&s) {
                return Err(format!(
                    "shares = {s}: cpu.shares must be {MIN_SHARES}..{MAX_SHARES} (1024 = nice 0)"
                ));
            }
            Ok(s.to_string())
        }
        "idle" => {
            let i = match v {
                Raw::Bool(b) => i64::from(*b),
                _ => int()?,
            };
            if !(0..=1).contains(&i) {
                return Err(format!("idle = {i}: cpu.idle must be 0 or 1"));
            }
            Ok(i.to_string())
        }
        "max" => {
            let s = match v {
                Raw::Str(s) => s.clone(),
                Raw::Int(i) => i.to_string(),
                Raw::Bool(b) => return Err(format!("max = {b}: expected \"QUOTA PERIOD\"")),
            };
            // cpu_max_write(): "$MAX $PERIOD", $MAX "max" or a number of µs, $PERIOD optional
            let words: Vec<&str> = s.split_whitespace().collect();
            let num = |w: &str| !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit());
            let ok = match words.as_slice() {
                [q] => *q == "max" || num(q),
                [q, p] => (*q == "max" || num(q)) && num(p),
                _ => false,
            };
            if !ok {
                return Err(format!(
                    "max = {s:?}: cpu.max takes \"QUOTA PERIOD\" in µs (QUOTA may be \"max\"), \
                     e.g. \"50000 100000\""
                ));
            }
            Ok(words.join(" "))
        }
        _ => Err(format!("unknown key '{key}' (known: {KNOWN})")),
    }
}

/// A value as written in TOML or on the command line.
#[derive(Clone, Debug)]
enum Raw {
    Int(i64),
    Str(String),
    Bool(bool),
}

fn file_of(key: &str) -> Option<(&'static str, &'static str)> {
    KEYS.iter().find(|(k, _)| *k == key).copied()
}

impl Group {
    fn new(path: &str, origin: String, span: Option<Range<usize>>) -> Result<Group, String> {
        if let Err(e) = parse_cgroup_path(path) {
            return Err(format!("{origin}: {}", e.reason));
        }
        Ok(Group {
            path: path.to_string(),
            origin,
            settings: Vec::new(),
            span,
        })
    }

    /// Adds `key = value` after the checks; `at` names where it was given.
    fn set(
        &mut self,
        key: &str,
        v: &Raw,
        origin: String,
        span: Option<Range<usize>>,
    ) -> Result<(), String> {
        let here = |m: String| format!("{origin}: cgroup {}: {m}", self.path);
        let Some((key, file)) = file_of(key) else {
            return Err(here(format!("unknown key '{key}' (known: {KNOWN})")));
        };
        if self.path == "/" {
            return Err(here(format!(
                "the root cgroup has no {file} file (give a group below /)"
            )));
        }
        let value = check_value(key, v).map_err(here)?;
        let weights = ["weight", "weight_nice", "shares"];
        if let Some(prev) = self
            .settings
            .iter()
            .find(|s| s.key == key || (weights.contains(&key) && weights.contains(&s.key)))
        {
            return Err(here(format!(
                "{key} and {} both set the group's weight; give one",
                prev.key
            )));
        }
        self.settings.push(Setting {
            key,
            file,
            value,
            origin,
            span,
        });
        // the kernel's order: the weight, then idle (an idle group's weight cannot be written),
        // then the bandwidth
        self.settings
            .sort_by_key(|s| KEYS.iter().position(|(k, _)| *k == s.key).unwrap_or(0));
        Ok(())
    }
}

impl Cgroups {
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Appends `other`'s groups (a group named twice is set up twice, in order).
    pub fn extend(&mut self, other: Cgroups) {
        self.groups.extend(other.groups);
    }

    /// `--cgroup PATH[:KEY=VALUE[,KEY=VALUE...]]`, e.g. `/test-A:weight=200,idle=0` or
    /// `/test-B` (created only). A PATH with a `:` in it can only be given in a file.
    pub fn parse_flag(v: &str) -> Result<Cgroups, String> {
        let origin = format!("--cgroup '{}'", schedlab_engine::input::one_line(v));
        let (path, rest) = match v.rsplit_once(':') {
            Some((p, r)) if !r.contains('/') => (p, Some(r)),
            _ => (v, None),
        };
        let mut g = Group::new(path, origin.clone(), None)?;
        if let Some(rest) = rest {
            if rest.is_empty() {
                return Err(format!(
                    "{origin}: nothing after ':' (give KEY=VALUE: {KNOWN})"
                ));
            }
            for kv in rest.split(',') {
                let Some((k, val)) = kv.split_once('=') else {
                    return Err(format!("{origin}: '{kv}' is not KEY=VALUE (keys: {KNOWN})"));
                };
                let raw = match val.trim().parse::<i64>() {
                    Ok(i) => Raw::Int(i),
                    Err(_) => Raw::Str(val.to_string()),
                };
                g.set(k.trim(), &raw, origin.clone(), None)?;
            }
        }
        Ok(Cgroups { groups: vec![g] })
    }

    /// A file whose only table is `[cgroups]` (`--cgroup-file`); errors name the file and line.
    pub fn load_file(path: &str) -> Result<Cgroups, String> {
        let text = schedlab_engine::input::read_input_file(std::path::Path::new(path))
            .map_err(|e| format!("{path}: {e}"))?;
        Cgroups::parse_file(&text, path)
    }

    /// [`Cgroups::load_file`] on `text` read from `file`.
    pub fn parse_file(text: &str, file: &str) -> Result<Cgroups, String> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct OnlyCgroups {
            cgroups: Cgroups,
        }
        let f: OnlyCgroups = toml::from_str(text).map_err(|e| toml_error(&e, text, file))?;
        f.cgroups.located(text, file)
    }

    /// The checks that need the file's text: names every group and setting with `FILE:LINE`
    /// (a scenario file's `[cgroups]` goes through here after the file is parsed).
    pub fn located(self, text: &str, file: &str) -> Result<Cgroups, String> {
        let at = |span: &Option<Range<usize>>| match span {
            Some(s) => format!("{file}:{}", line_of(text, s.start)),
            None => file.to_string(),
        };
        let mut out = Cgroups::default();
        for g in self.groups {
            let origin = at(&g.span);
            let mut ng = Group::new(&g.path, origin, g.span.clone())?;
            for s in g.settings {
                // `value` holds the raw text here (see the Deserialize impl)
                let raw = raw_of(&s.value);
                ng.set(s.key, &raw, at(&s.span), s.span.clone())?;
            }
            out.groups.push(ng);
        }
        Ok(out)
    }

    /// `mkdir -p` of every group and the writes to its files, through the set-up handle.
    /// An error names where the group or value was given and what the kernel said.
    pub fn apply(&self, sys: &mut dyn Sys) -> Result<(), String> {
        for g in &self.groups {
            sys.cgroup_mkdir(&g.path)
                .map_err(|e| format!("{}: cgroup {}: {e}", g.origin, g.path))?;
            for s in &g.settings {
                sys.cgroup_write(&g.path, s.file, &s.value).map_err(|e| {
                    format!(
                        "{}: cgroup {}: {} = {:?}: {e}",
                        s.origin, g.path, s.key, s.value
                    )
                })?;
            }
        }
        Ok(())
    }
}

/// The raw text kept between deserialising and [`Cgroups::located`]: `i:N`, `b:true`, `s:TEXT`.
fn raw_of(v: &str) -> Raw {
    if let Some(n) = v.strip_prefix("i:").and_then(|n| n.parse().ok()) {
        Raw::Int(n)
    } else if let Some(b) = v.strip_prefix("b:") {
        Raw::Bool(b == "true")
    } else {
        Raw::Str(v.strip_prefix("s:").unwrap_or(v).to_string())
    }
}

/// 1-based line of byte `offset` of `text`.
fn line_of(text: &str, offset: usize) -> usize {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    text[..offset].matches('\n').count() + 1
}

fn toml_error(e: &toml::de::Error, text: &str, file: &str) -> String {
    let msg = e.message().trim().replace('\n', "; ");
    match e.span() {
        Some(sp) => format!("{file}:{}: {msg}", line_of(text, sp.start)),
        None => format!("{file}: {msg}"),
    }
}

/// The `[cgroups]` table as deserialised: paths in file order, each value with its span. The
/// checks come afterwards, in [`Cgroups::located`], which has the text to name lines.
impl<'de> Deserialize<'de> for Cgroups {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Cgroups, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct RawGroup {
            weight: Option<toml::Spanned<toml::Value>>,
            weight_nice: Option<toml::Spanned<toml::Value>>,
            shares: Option<toml::Spanned<toml::Value>>,
            idle: Option<toml::Spanned<toml::Value>>,
            max: Option<toml::Spanned<toml::Value>>,
        }
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Cgroups;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a table of cgroup paths, e.g. [cgroups.\"/test-A\"] weight = 200")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Cgroups, A::Error> {
                use serde::de::Error;
                let mut out = Cgroups::default();
                while let Some(path) = m.next_key::<String>()? {
                    let g: toml::Spanned<RawGroup> = m.next_value()?;
                    let span = Some(g.span());
                    let g = g.into_inner();
                    let mut settings = Vec::new();
                    for (key, v) in [
                        ("weight", g.weight),
                        ("weight_nice", g.weight_nice),
                        ("shares", g.shares),
                        ("idle", g.idle),
                        ("max", g.max),
                    ] {
                        let Some(v) = v else { continue };
                        let (key, file) = file_of(key).expect("listed");
                        let span = Some(v.span());
                        let value = match v.into_inner() {
                            toml::Value::Integer(i) => format!("i:{i}"),
                            toml::Value::Boolean(b) => format!("b:{b}"),
                            toml::Value::String(s) => format!("s:{s}"),
                            other => {
                                return Err(A::Error::custom(format!(
                                    "cgroups.{path:?}.{key}: {} is neither a number nor a \
                                     string",
                                    other.type_str()
                                )))
                            }
                        };
                        settings.push(Setting {
                            key,
                            file,
                            value,
                            origin: String::new(),
                            span,
                        });
                    }
                    out.groups.push(Group {
                        path,
                        origin: String::new(),
                        settings,
                        span,
                    });
                }
                Ok(out)
            }
        }
        d.deserialize_map(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel() -> schedlab_sched::Kernel {
        let cfg = schedlab_sched::KernelConfig::parse("v6.18").unwrap();
        let m = schedlab_sched::MachineDesc::ideal(1, 1000, schedlab_sched::PreemptModel::Full);
        schedlab_sched::Kernel::new(cfg, m, 1).unwrap()
    }

    #[test]
    fn a_file_is_applied_in_order_with_the_kernel_values() {
        let text = "[cgroups.\"/a/b\"]\nweight = 200\nidle = 0\n\n[cgroups.\"/c\"]\nidle = true\n\
                    [cgroups.\"/d\"]\nweight_nice = -20\n[cgroups.\"/e\"]\n";
        let c = Cgroups::parse_file(text, "f.toml").unwrap();
        let paths: Vec<&str> = c.groups.iter().map(|g| g.path.as_str()).collect();
        assert_eq!(paths, vec!["/a/b", "/c", "/d", "/e"]);
        assert_eq!(c.groups[0].origin, "f.toml:1");
        assert_eq!(c.groups[0].settings[1].origin, "f.toml:3");
        assert_eq!(c.groups[1].settings[0].value, "1");
        let mut k = kernel();
        c.apply(&mut k).unwrap();
        // cpu.weight 200 → round(200 · 1024 / 100) = 2048 (sched_weight_from_cgroup), scaled
        // by 2^10 on 64-bit: 2 097 152; nice -20 → 88761 · 1024; idle → WEIGHT_IDLEPRIO 3
        let shares = |p: &str| k.tgs[k.cgroup_lookup(p).unwrap().index()].shares;
        assert_eq!(shares("/a/b"), 2048 << 10);
        assert_eq!(shares("/a"), 1024 << 10);
        assert_eq!(shares("/c"), 3 << 10);
        assert_eq!(shares("/d"), 88761 << 10);
        assert_eq!(shares("/e"), 1024 << 10);
    }

    #[test]
    fn bad_files_name_the_file_and_line() {
        for (text, want) in [
            (
                "[cgroups.\"/a\"]\nweight = 0\n",
                "f.toml:2: cgroup /a: weight = 0: cpu.weight must be 1..10000",
            ),
            ("[cgroups.\"/a\"]\nweight = 10001\n", "f.toml:2:"),
            (
                "[cgroups.\"/a\"]\n\nidle = 2\n",
                "f.toml:3: cgroup /a: idle = 2: cpu.idle must be 0 or 1",
            ),
            (
                "[cgroups.\"/a\"]\nwieght = 1\n",
                "f.toml:2: unknown field `wieght`",
            ),
            (
                "[cgroups.\"a\"]\nweight = 1\n",
                "f.toml:1: cgroup path \"a\" must start with '/'",
            ),
            ("[cgroups.\"/a//b\"]\n", "empty component"),
            (
                "[cgroups.\"/\"]\nweight = 5\n",
                "f.toml:2: cgroup /: the root cgroup has no cpu.weight",
            ),
            (
                "[cgroups.\"/a\"]\nweight = 5\nshares = 100\n",
                "f.toml:3: cgroup /a: shares and weight both",
            ),
            (
                "[cgroups.\"/a\"]\nmax = \"50000 x\"\n",
                "f.toml:2: cgroup /a: max = \"50000 x\"",
            ),
            (
                "[cgroups.\"/a\"]\nweight = \"x\"\n",
                "f.toml:2: cgroup /a: weight = \"x\": expected an integer",
            ),
            (
                "[cgroups.\"/a\"]\nweight = 1.5\n",
                "neither a number nor a string",
            ),
            ("[other]\n", "f.toml:1: unknown field `other`"),
        ] {
            let e = Cgroups::parse_file(text, "f.toml").unwrap_err();
            assert!(e.contains(want), "{text:?}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn the_flag() {
        let c = Cgroups::parse_flag("/a:weight=200,idle=0").unwrap();
        assert_eq!(c.groups[0].path, "/a");
        let s: Vec<(&str, &str)> = c.groups[0]
            .settings
            .iter()
            .map(|s| (s.file, s.value.as_str()))
            .collect();
        assert_eq!(s, vec![("cpu.weight", "200"), ("cpu.idle", "0")]);
        let c = Cgroups::parse_flag("/only/made").unwrap();
        assert!(c.groups[0].settings.is_empty());
        // a trailing newline is accepted, as the kernel's kstrto*() accept `echo 200 >`'s
        let c = Cgroups::parse_flag("/a:weight=200\n").unwrap();
        assert_eq!(c.groups[0].settings[0].value, "200");
        let c = Cgroups::parse_flag("/a:max=max 100000").unwrap();
        assert_eq!(c.groups[0].settings[0].value, "max 100000");
        for (v, want) in [
            (
                "/a:weight=0",
                "--cgroup '/a:weight=0': cgroup /a: weight = 0",
            ),
            ("/a:foo=1", "unknown key 'foo'"),
            ("/a:weight", "'weight' is not KEY=VALUE"),
            ("/a:", "nothing after ':'"),
            ("a:weight=1", "must start with '/'"),
            ("/a:idle=3", "cpu.idle must be 0 or 1"),
            ("/a\n:weight=1", "--cgroup '/a\\n:weight=1'"),
        ] {
            let e = Cgroups::parse_flag(v).unwrap_err();
            assert!(e.contains(want), "{v}: {e}");
        }
    }

    /// A scenario file's `[cgroups]` table goes through the same checks, named with the
    /// scenario file and line.
    #[test]
    fn scenario_files_take_a_cgroups_table() {
        let head = "name = \"x\"\ntitle = \"t\"\nseed = \"s\"\nplatform = \"smp:1\"\n\
                    workloads = [\"cgroup=/a stress-ng --pipe 1\"]\nbaseline = \"v6.18\"\n\
                    metrics = [\"sched_switch\"]\n[[variant]]\nkernel = \"v6.18\"\nlabel = \"l\"\n";
        let sc = crate::scenario::parse(
            &format!("{head}[cgroups.\"/a\"]\nweight = 300\n[cgroups.\"/b\"]\n"),
            "s.toml",
        )
        .unwrap();
        let paths: Vec<&str> = sc.cgroups.groups.iter().map(|g| g.path.as_str()).collect();
        assert_eq!(paths, vec!["/a", "/b"]);
        assert_eq!(sc.cgroups.groups[0].settings[0].origin, "s.toml:12");
        let e = crate::scenario::parse(&format!("{head}[cgroups.\"/a\"]\nidle = 5\n"), "s.toml")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("s.toml:12: cgroup /a: idle = 5"), "{e}");
        let e = crate::scenario::parse(&format!("{head}[cgroups.\"/a\"]\nmin = 5\n"), "s.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("s.toml:12:") && e.contains("unknown field `min`"),
            "{e}"
        );
        // a scenario without the table has none
        assert!(crate::scenario::parse(head, "s.toml")
            .unwrap()
            .cgroups
            .is_empty());
    }

    /// What the kernel refuses at apply time is named with its origin too (before the cpu.max
    /// handler exists, `max` is such a refusal; afterwards an out-of-range period is).
    #[test]
    fn kernel_refusals_name_the_origin() {
        let c = Cgroups::parse_file("[cgroups.\"/a\"]\nmax = \"1 1\"\n", "f.toml").unwrap();
        let e = c.apply(&mut kernel()).unwrap_err();
        assert!(e.starts_with("f.toml:2: cgroup /a: max = \"1 1\": "), "{e}");
    }
}
