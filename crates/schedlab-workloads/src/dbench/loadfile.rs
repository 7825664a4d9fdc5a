//! dbench loadfiles: the operations a client replays (workloads.md §7.1–7.2).
//!
//! The real `client.txt` (and so mmtests' `client-tiny.txt` = its lines 601–4173 and
//! `client-warmup.txt` = lines 1–600) is **not** shipped or copied here. The built-in
//! `client-tiny` (3 573 lines) and `client-warmup` (600 lines) are our own deterministic
//! synthetic description of the operation mix of W§7.2's table (**unverified**: the table's
//! shares are recalled, not counted from the file):
//!
//! * counts: each share of the table × lines, the shares first divided by their sum
//!   (101.948 %: the table's rows add up to more than 100 %; Mkdir is taken as 0.028 %, one
//!   line of client-tiny, Deltree as none), rounded by largest remainder so the counts add up
//!   to the line count — see [`CLIENT_TINY_COUNTS`];
//! * structure: `Close` count = successful opens; the other `NTCreateX` lines are opens of
//!   names that do not exist (dbench loadfiles expect `NT_STATUS_OBJECT_NAME_NOT_FOUND` for
//!   them); as many opens create a file as there are `Unlink`s (a steady state: every pass
//!   creates and removes the same files); writes and `Flush`es go to created files, reads,
//!   `Qfileinfo`, `Sfileinfo` and locks to any open file; path-based operations sit between
//!   the open–close sessions, every kind spread evenly over the pass;
//! * sizes: `ReadX`/`WriteX` sizes cycle through [`SIZE_CYCLE`] (mean 14 720 B), chosen so
//!   one pass moves ≈ 18.6 MB — what seed 002's one-client figures imply (1 268.8 MB/s ×
//!   14.62 ms = 18.55 MB). W§7.2 also says "mean ≈ 40 KiB", which cannot hold together with
//!   that: 1 261 reads and writes × 40 KiB would be 52 MB per pass; the bytes per pass are
//!   followed here.
//!
//! A loadfile read from disk (`--loadfile FILE`) is parsed in dbench 4's format: an optional
//! leading time (seconds since the client's start; the client sleeps until then), the
//! operation, its arguments, and the expected NT status. Bad lines are errors naming
//! `FILE:LINE`.

/// A loadfile operation, in the order of dbench's latency table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OpKind {
    NTCreateX,
    Close,
    Rename,
    Unlink,
    Deltree,
    Mkdir,
    Rmdir,
    Qpathinfo,
    Qfileinfo,
    Qfsinfo,
    Sfileinfo,
    Find,
    WriteX,
    ReadX,
    LockX,
    UnlockX,
    Flush,
    /// `Sleep usec`: the client sleeps (no operation, no latency entry, not in the table).
    Sleep,
}

/// Number of [`OpKind`]s (the 17 of the table and `Sleep`): the size of per-kind arrays.
pub const NKINDS: usize = 18;

/// Marks a line without a path ([`Line::path`]).
pub const NO_PATH: u32 = u32::MAX;

impl OpKind {
    /// The operations of dbench's latency table (every kind but `Sleep`), in dbench 4.00's
    /// order.
    pub const ALL: [OpKind; 17] = [
        OpKind::NTCreateX,
        OpKind::Close,
        OpKind::Rename,
        OpKind::Unlink,
        OpKind::Deltree,
        OpKind::Mkdir,
        OpKind::Rmdir,
        OpKind::Qpathinfo,
        OpKind::Qfileinfo,
        OpKind::Qfsinfo,
        OpKind::Sfileinfo,
        OpKind::Find,
        OpKind::WriteX,
        OpKind::ReadX,
        OpKind::LockX,
        OpKind::UnlockX,
        OpKind::Flush,
    ];

    /// The name in dbench's table.
    pub fn name(self) -> &'static str {
        match self {
            OpKind::NTCreateX => "NTCreateX",
            OpKind::Close => "Close",
            OpKind::Rename => "Rename",
            OpKind::Unlink => "Unlink",
            OpKind::Deltree => "Deltree",
            OpKind::Mkdir => "Mkdir",
            OpKind::Rmdir => "Rmdir",
            OpKind::Qpathinfo => "Qpathinfo",
            OpKind::Qfileinfo => "Qfileinfo",
            OpKind::Qfsinfo => "Qfsinfo",
            OpKind::Sfileinfo => "Sfileinfo",
            OpKind::Find => "Find",
            OpKind::WriteX => "WriteX",
            OpKind::ReadX => "ReadX",
            OpKind::LockX => "LockX",
            OpKind::UnlockX => "UnlockX",
            OpKind::Flush => "Flush",
            OpKind::Sleep => "Sleep",
        }
    }

    /// The name in the gormanm tree's table (netbench.md §15.4: the loadfile's own names).
    pub fn gormanm_name(self) -> &'static str {
        match self {
            OpKind::Qpathinfo => "QUERY_PATH_INFORMATION",
            OpKind::Qfileinfo => "QUERY_FILE_INFORMATION",
            OpKind::Qfsinfo => "QUERY_FS_INFORMATION",
            OpKind::Sfileinfo => "SET_FILE_INFORMATION",
            OpKind::Find => "FIND_FIRST",
            k => k.name(),
        }
    }

    /// The table order of the gormanm tree (mmtests' dbench; netbench.md §15.4).
    pub const GORMANM_ORDER: [OpKind; 17] = [
        OpKind::Deltree,
        OpKind::Flush,
        OpKind::Close,
        OpKind::LockX,
        OpKind::Rmdir,
        OpKind::Mkdir,
        OpKind::Rename,
        OpKind::ReadX,
        OpKind::WriteX,
        OpKind::Unlink,
        OpKind::UnlockX,
        OpKind::Find,
        OpKind::Sfileinfo,
        OpKind::Qfileinfo,
        OpKind::Qpathinfo,
        OpKind::Qfsinfo,
        OpKind::NTCreateX,
    ];

    pub fn index(self) -> usize {
        self as usize
    }

    /// The `[programs.dbench]` key of the operation's CPU cost.
    pub fn cost_key(self) -> &'static str {
        match self {
            OpKind::NTCreateX => "ntcreatex",
            OpKind::Close => "close",
            OpKind::Rename => "rename",
            OpKind::Unlink => "unlink",
            OpKind::Deltree => "deltree",
            OpKind::Mkdir => "mkdir",
            OpKind::Rmdir => "rmdir",
            OpKind::Qpathinfo => "qpathinfo",
            OpKind::Qfileinfo => "qfileinfo",
            OpKind::Qfsinfo => "qfsinfo",
            OpKind::Sfileinfo => "sfileinfo",
            OpKind::Find => "find",
            OpKind::WriteX => "writex",
            OpKind::ReadX => "readx",
            OpKind::LockX => "lockx",
            OpKind::UnlockX => "unlockx",
            OpKind::Flush => "flush",
            OpKind::Sleep => "sleep",
        }
    }

    /// W§7.2's CPU cost (x86 column, fixed part, ns): the model's default where the platform
    /// gives no `[programs.dbench]` value. Rmdir (not in the table) as Mkdir.
    pub fn table_cost_ns(self) -> u64 {
        match self {
            OpKind::ReadX => 3_000,
            OpKind::NTCreateX => 9_000,
            OpKind::Qpathinfo => 4_000,
            OpKind::Close => 1_500,
            OpKind::WriteX => 12_000,
            OpKind::Find => 14_000,
            OpKind::Unlink => 40_000,
            OpKind::Qfsinfo => 2_000,
            OpKind::Qfileinfo => 1_000,
            OpKind::Sfileinfo => 4_000,
            OpKind::Flush => 15_000,
            OpKind::Rename => 18_000,
            OpKind::LockX | OpKind::UnlockX => 2_000,
            OpKind::Mkdir | OpKind::Rmdir => 8_000,
            OpKind::Deltree => 2_000_000,
            OpKind::Sleep => 0,
        }
    }
}

/// One loadfile line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line {
    pub kind: OpKind,
    /// File number within the client (path or handle resolved); meaningless for lines
    /// that name no file.
    pub file: u32,
    /// ReadX/WriteX bytes asked for; `Sleep`: microseconds.
    pub size: u32,
    /// ReadX/WriteX: the returned size of the trace (`ret_size`, the size when absent).
    pub ret_size: u32,
    /// FIND_FIRST: the number of entries returned (the count argument, 0 when absent).
    pub count: u32,
    /// The path arguments as written after dbench's `\` → `/` rewrite: indices into
    /// [`Loadfile::paths`], [`NO_PATH`] where the line has none (dbench takes a word as a
    /// path only if it starts with `/`).
    pub path: [u32; 2],
    /// NTCreateX: the open creates the file.
    pub create: bool,
    /// NTCreateX expected to fail (no handle).
    pub fail: bool,
    /// Leading time of the line (ns since the client's start), if any.
    pub at_ns: Option<u64>,
}

impl Line {
    fn new(kind: OpKind, file: u32) -> Line {
        Line {
            kind,
            file,
            size: 0,
            ret_size: 0,
            count: 0,
            path: [NO_PATH; 2],
            create: false,
            fail: false,
            at_ns: None,
        }
    }
}

/// A loadfile: its name as printed and its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loadfile {
    pub name: String,
    pub lines: Vec<Line>,
    /// The distinct path strings of the lines ([`Line::path`]).
    pub paths: Vec<String>,
}

impl Loadfile {
    /// Lines of each kind, indexed by [`OpKind::index`].
    pub fn counts(&self) -> [u64; NKINDS] {
        let mut c = [0u64; NKINDS];
        for l in &self.lines {
            c[l.kind.index()] += 1;
        }
        c
    }

    /// Bytes read and written by one pass.
    pub fn bytes_per_pass(&self) -> u64 {
        self.lines
            .iter()
            .filter(|l| matches!(l.kind, OpKind::ReadX | OpKind::WriteX))
            .map(|l| l.size as u64)
            .sum()
    }
}

/// ReadX/WriteX sizes, used in turn (each kind has its own turn): mean 14 720 B.
pub const SIZE_CYCLE: [u32; 8] = [65_536, 4_096, 16_384, 1_024, 8_192, 4_096, 16_384, 2_048];

/// Line counts of the built-in `client-tiny` (3 573 lines), by kind (see the module docs).
pub const CLIENT_TINY_COUNTS: [(OpKind, u32); 15] = [
    (OpKind::ReadX, 946),     // 27 %
    (OpKind::NTCreateX, 631), // 18 %
    (OpKind::Qpathinfo, 561), // 16 %
    (OpKind::Close, 456),     // 13 %
    (OpKind::WriteX, 315),    // 9 %
    (OpKind::Find, 210),      // 6 %
    (OpKind::Unlink, 123),    // 3.5 %
    (OpKind::Qfsinfo, 105),   // 3 %
    (OpKind::Qfileinfo, 105), // 3 %
    (OpKind::Sfileinfo, 49),  // 1.4 %
    (OpKind::Flush, 42),      // 1.2 %
    (OpKind::Rename, 25),     // 0.7 %
    (OpKind::LockX, 2),       // 0.06 %
    (OpKind::UnlockX, 2),     // 0.06 %
    (OpKind::Mkdir, 1),       // ≪ 0.1 %
];

/// W§7.2's shares (%), for the counts of a loadfile of another length.
const SHARES: [(OpKind, f64); 15] = [
    (OpKind::ReadX, 27.0),
    (OpKind::NTCreateX, 18.0),
    (OpKind::Qpathinfo, 16.0),
    (OpKind::Close, 13.0),
    (OpKind::WriteX, 9.0),
    (OpKind::Find, 6.0),
    (OpKind::Unlink, 3.5),
    (OpKind::Qfsinfo, 3.0),
    (OpKind::Qfileinfo, 3.0),
    (OpKind::Sfileinfo, 1.4),
    (OpKind::Flush, 1.2),
    (OpKind::Rename, 0.7),
    (OpKind::LockX, 0.06),
    (OpKind::UnlockX, 0.06),
    (OpKind::Mkdir, 0.028),
];

/// Counts for `n` lines: shares normalised to their sum, largest remainder (ties: table
/// order).
pub fn mix_counts(n: u32) -> Vec<(OpKind, u32)> {
    let total: f64 = SHARES.iter().map(|s| s.1).sum();
    let exact: Vec<f64> = SHARES.iter().map(|s| s.1 / total * n as f64).collect();
    let mut counts: Vec<u32> = exact.iter().map(|e| e.floor() as u32).collect();
    let left = n - counts.iter().sum::<u32>();
    let mut order: Vec<usize> = (0..SHARES.len()).collect();
    order.sort_by(|&a, &b| {
        let (ra, rb) = (exact[a] - exact[a].floor(), exact[b] - exact[b].floor());
        rb.partial_cmp(&ra).unwrap().then(a.cmp(&b))
    });
    for &i in order.iter().take(left as usize) {
        counts[i] += 1;
    }
    SHARES.iter().zip(counts).map(|(s, c)| (s.0, c)).collect()
}

/// The built-in loadfiles by name (`client-tiny`, `client-warmup`, with or without `.txt`
/// and a directory).
pub fn builtin(name: &str) -> Option<Loadfile> {
    let base = name.rsplit('/').next().unwrap_or(name);
    let base = base.strip_suffix(".txt").unwrap_or(base);
    let n = match base {
        "client-tiny" => 3_573,
        "client-warmup" => 600,
        _ => return None,
    };
    Some(synthesize(&format!("{base}.txt"), n))
}

/// Spreads `count` items evenly over `slots` slots: the slot of item `j`.
fn spread(j: u32, count: u32, slots: u32) -> u32 {
    ((j as u64 * slots as u64) / count.max(1) as u64) as u32
}

/// Builds a synthetic loadfile of `n` lines with the mix of [`mix_counts`].
pub fn synthesize(name: &str, n: u32) -> Loadfile {
    let count = |k: OpKind| -> u32 { mix_counts(n).iter().find(|c| c.0 == k).map_or(0, |c| c.1) };
    let sessions = count(OpKind::Close).max(1);
    let creates = count(OpKind::Unlink).min(sessions);
    let failed_opens = count(OpKind::NTCreateX).saturating_sub(sessions);
    // a session creates a file when the created-file counter s × creates / sessions steps
    // (the first session of each step: evenly spread)
    let creating: Vec<Option<u32>> = (0..sessions)
        .map(|s| {
            let a = spread(s, sessions, creates);
            let first = s == 0 || spread(s - 1, sessions, creates) != a;
            (creates > 0 && first).then_some(a)
        })
        .collect();
    let created_sessions: Vec<u32> = (0..sessions)
        .filter(|&s| creating[s as usize].is_some())
        .collect();
    // per-session lines
    let mut in_session: Vec<Vec<Line>> = vec![Vec::new(); sessions as usize];
    let file_of = |s: u32| -> u32 {
        match creating[s as usize] {
            Some(c) => c,
            None => 10_000 + s, // an existing file
        }
    };
    let mut size_turn = [0usize; 2];
    let sized = |kind: OpKind, file: u32, turn: &mut [usize; 2]| {
        let i = if kind == OpKind::ReadX { 0 } else { 1 };
        let mut l = Line::new(kind, file);
        l.size = SIZE_CYCLE[turn[i] % SIZE_CYCLE.len()];
        turn[i] += 1;
        l
    };
    // reads over all sessions, writes and flushes over the creating sessions
    for (kind, over_created) in [
        (OpKind::ReadX, false),
        (OpKind::Qfileinfo, false),
        (OpKind::LockX, false),
        (OpKind::UnlockX, false),
        (OpKind::Sfileinfo, false),
        (OpKind::WriteX, true),
        (OpKind::Flush, true),
    ] {
        let c = count(kind);
        for j in 0..c {
            let s = if over_created && !created_sessions.is_empty() {
                created_sessions[spread(j, c, created_sessions.len() as u32) as usize]
            } else {
                spread(j, c, sessions)
            };
            let f = file_of(s);
            let line = match kind {
                OpKind::ReadX | OpKind::WriteX => sized(kind, f, &mut size_turn),
                _ => Line::new(kind, f),
            };
            in_session[s as usize].push(line);
        }
    }
    // keep each session's order: writes before the flush, lock before unlock
    for lines in in_session.iter_mut() {
        lines.sort_by_key(|l| match l.kind {
            OpKind::LockX => 0,
            OpKind::ReadX | OpKind::Qfileinfo | OpKind::Sfileinfo => 1,
            OpKind::WriteX => 2,
            OpKind::Flush => 3,
            OpKind::UnlockX => 4,
            _ => 5,
        });
    }
    // path operations between sessions (gap g comes before session g)
    let mut gaps: Vec<Vec<Line>> = vec![Vec::new(); sessions as usize + 1];
    for kind in [
        OpKind::Qpathinfo,
        OpKind::Find,
        OpKind::Qfsinfo,
        OpKind::Rename,
        OpKind::Mkdir,
        OpKind::NTCreateX, // the failing opens
    ] {
        let c = if kind == OpKind::NTCreateX {
            failed_opens
        } else {
            count(kind)
        };
        for j in 0..c {
            let g = spread(j, c, sessions);
            let mut l = Line::new(kind, 20_000 + j);
            if kind == OpKind::NTCreateX {
                l.fail = true;
            }
            gaps[g as usize].push(l);
        }
    }
    // each created file is removed two sessions after its own (the last ones at the end)
    for (k, &s) in created_sessions.iter().enumerate() {
        let g = ((s + 3) as usize).min(sessions as usize);
        gaps[g].push(Line::new(OpKind::Unlink, k as u32));
    }
    let mut lines = Vec::with_capacity(n as usize);
    for s in 0..sessions {
        lines.append(&mut gaps[s as usize]);
        let f = file_of(s);
        let mut open = Line::new(OpKind::NTCreateX, f);
        open.create = creating[s as usize].is_some();
        lines.push(open);
        lines.append(&mut in_session[s as usize]);
        lines.push(Line::new(OpKind::Close, f));
    }
    lines.append(&mut gaps[sessions as usize]);
    for l in lines.iter_mut() {
        l.ret_size = l.size;
        match l.kind {
            OpKind::Rename => l.path = [0, 0],
            OpKind::NTCreateX
            | OpKind::Unlink
            | OpKind::Mkdir
            | OpKind::Rmdir
            | OpKind::Deltree
            | OpKind::Qpathinfo => l.path[0] = 0,
            OpKind::Find => {
                l.path[0] = 0;
                l.count = SYNTH_FIND_COUNT;
            }
            _ => {}
        }
    }
    Loadfile {
        name: name.to_string(),
        lines,
        paths: vec![SYNTH_PATH.to_string()],
    }
}

/// The one path of the synthetic loadfiles (tbench's request sizes depend on path lengths):
/// the shape of dbench's loadfile paths, 39 characters (**unverified**: `client.txt` was not
/// read).
pub const SYNTH_PATH: &str = "/clients/client1/~dmtmp/WORD/CHAP10.DOC";

/// FIND_FIRST's returned entry count in the synthetic loadfiles (**unverified**).
pub const SYNTH_FIND_COUNT: u32 = 10;

/// Splits a loadfile line into words; `"quoted strings"` are one word.
fn words(line: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let Some(&c) = chars.peek() else { break };
        let mut w = String::new();
        if c == '"' {
            chars.next();
            loop {
                match chars.next() {
                    Some('"') => break,
                    Some(ch) => w.push(ch),
                    None => return Err("unterminated quoted string".to_string()),
                }
            }
        } else {
            while let Some(&ch) = chars.peek() {
                if ch.is_whitespace() {
                    break;
                }
                w.push(ch);
                chars.next();
            }
        }
        out.push(w);
    }
    Ok(out)
}

/// Parses the text of a dbench 4 loadfile; `file` names it in errors (`FILE:LINE: …`).
pub fn parse(file: &str, text: &str) -> Result<Loadfile, String> {
    use std::collections::HashMap;
    let mut paths: HashMap<String, u32> = HashMap::new();
    // the path texts after dbench's `\` → `/` rewrite, by id
    let mut texts: Vec<String> = Vec::new();
    let mut handles: HashMap<i64, u32> = HashMap::new();
    let mut lines = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let at = |msg: String| format!("{file}:{}: {msg}", i + 1);
        let body = raw.trim();
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        let mut w = words(body).map_err(at)?;
        let mut at_ns = None;
        if let Some(first) = w.first() {
            if first.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
                let t: f64 = first
                    .parse()
                    .ok()
                    .filter(|t: &f64| t.is_finite() && *t >= 0.0 && *t < 1e9)
                    .ok_or_else(|| at(format!("bad time '{first}'")))?;
                at_ns = Some((t * 1e9).round() as u64);
                w.remove(0);
            }
        }
        if w.is_empty() {
            return Err(at("no operation".to_string()));
        }
        let op = w[0].clone();
        let status = w.last().cloned().unwrap_or_default();
        if w.len() < 2 || !status.starts_with("NT_STATUS_") {
            return Err(at(format!(
                "'{op}': the line must end with an NT_STATUS_ code"
            )));
        }
        let args = &w[1..w.len() - 1];
        let ok = status == "NT_STATUS_OK";
        let num = |k: usize, what: &str| -> Result<i64, String> {
            let s = args
                .get(k)
                .ok_or_else(|| at(format!("'{op}': missing {what}")))?;
            let v = if let Some(h) = s.strip_prefix("0x") {
                i64::from_str_radix(h, 16).ok()
            } else {
                s.parse::<i64>().ok()
            };
            v.ok_or_else(|| at(format!("'{op}': bad {what} '{s}'")))
        };
        let path = |k: usize| -> Result<String, String> {
            args.get(k)
                .cloned()
                .ok_or_else(|| at(format!("'{op}': missing path")))
        };
        let mut path_id = |p: String| -> u32 {
            let n = paths.len() as u32;
            *paths.entry(p.clone()).or_insert_with(|| {
                texts.push(p.replace('\\', "/"));
                n
            })
        };
        let handle = |h: i64, handles: &HashMap<i64, u32>| -> Result<u32, String> {
            handles
                .get(&h)
                .copied()
                .ok_or_else(|| at(format!("'{op}': handle {h} is not open")))
        };
        let mut line = match op.as_str() {
            "NTCreateX" => {
                let f = path_id(path(0)?);
                let disp = num(2, "create disposition")?;
                let fnum = num(3, "handle")?;
                let mut l = Line::new(OpKind::NTCreateX, f);
                l.path[0] = f;
                // FILE_SUPERSEDE 0, FILE_CREATE 2, FILE_OPEN_IF 3, FILE_OVERWRITE_IF 5
                l.create = ok && matches!(disp, 0 | 2 | 3 | 5);
                l.fail = !ok;
                if ok {
                    handles.insert(fnum, f);
                }
                l
            }
            "Close" => {
                let h = num(0, "handle")?;
                let f = handle(h, &handles)?;
                handles.remove(&h);
                Line::new(OpKind::Close, f)
            }
            "ReadX" | "WriteX" => {
                let f = handle(num(0, "handle")?, &handles)?;
                let size = num(2, "size")?;
                if !(0..=u32::MAX as i64).contains(&size) {
                    return Err(at(format!("'{op}': bad size '{size}'")));
                }
                let kind = if op == "ReadX" {
                    OpKind::ReadX
                } else {
                    OpKind::WriteX
                };
                let mut l = Line::new(kind, f);
                l.size = size as u32;
                l.ret_size = match args.get(3) {
                    Some(_) => {
                        let r = num(3, "returned size")?;
                        if !(0..=u32::MAX as i64).contains(&r) {
                            return Err(at(format!("'{op}': bad returned size '{r}'")));
                        }
                        r as u32
                    }
                    None => l.size,
                };
                l
            }
            "Flush" | "QUERY_FILE_INFORMATION" | "SET_FILE_INFORMATION" | "LockX" | "UnlockX" => {
                let f = handle(num(0, "handle")?, &handles)?;
                let kind = match op.as_str() {
                    "Flush" => OpKind::Flush,
                    "QUERY_FILE_INFORMATION" => OpKind::Qfileinfo,
                    "SET_FILE_INFORMATION" => OpKind::Sfileinfo,
                    "LockX" => OpKind::LockX,
                    _ => OpKind::UnlockX,
                };
                Line::new(kind, f)
            }
            "Unlink"
            | "Rename"
            | "Deltree"
            | "Mkdir"
            | "Rmdir"
            | "QUERY_PATH_INFORMATION"
            | "FIND_FIRST" => {
                let f = path_id(path(0)?);
                let kind = match op.as_str() {
                    "Unlink" => OpKind::Unlink,
                    "Rename" => OpKind::Rename,
                    "Deltree" => OpKind::Deltree,
                    "Mkdir" => OpKind::Mkdir,
                    "Rmdir" => OpKind::Rmdir,
                    "QUERY_PATH_INFORMATION" => OpKind::Qpathinfo,
                    _ => OpKind::Find,
                };
                let mut l = Line::new(kind, f);
                l.path[0] = f;
                if kind == OpKind::Rename {
                    let to = path(1)?;
                    l.path[1] = path_id(to);
                }
                if kind == OpKind::Find && args.get(3).is_some() {
                    let c = num(3, "count")?;
                    if !(0..=u32::MAX as i64).contains(&c) {
                        return Err(at(format!("'{op}': bad count '{c}'")));
                    }
                    l.count = c as u32;
                }
                l
            }
            "QUERY_FS_INFORMATION" => Line::new(OpKind::Qfsinfo, 0),
            "Sleep" => {
                let us = num(0, "time (µs)")?;
                if !(0..=u32::MAX as i64).contains(&us) {
                    return Err(at(format!("'{op}': bad time '{us}'")));
                }
                let mut l = Line::new(OpKind::Sleep, 0);
                l.size = us as u32;
                l
            }
            _ => return Err(at(format!("unknown operation '{op}'"))),
        };
        line.at_ns = at_ns;
        // a word is a path to dbench only if it starts with `/` after the rewrite
        for p in line.path.iter_mut() {
            if *p != NO_PATH && !texts[*p as usize].starts_with('/') {
                *p = NO_PATH;
            }
        }
        lines.push(line);
    }
    if lines.is_empty() {
        return Err(format!("{file}: no operations"));
    }
    Ok(Loadfile {
        name: file.to_string(),
        lines,
        paths: texts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_tiny_has_the_mix_of_the_table() {
        let lf = builtin("client-tiny.txt").unwrap();
        assert_eq!(lf.lines.len(), 3_573);
        let c = lf.counts();
        // Hand-computed: share / 101.948 % × 3 573, largest remainder. E.g. ReadX 27 % →
        // 946.28 → 946; NTCreateX 18 % → 630.85 → 631; Unlink 3.5 % → 122.67 → 123;
        // Rename 0.7 % → 24.53 → 25; LockX 0.06 % → 2.10 → 2; Mkdir 0.028 % → 0.98 → 1.
        let expect: [(OpKind, u32); 15] = [
            (OpKind::ReadX, 946),
            (OpKind::NTCreateX, 631),
            (OpKind::Qpathinfo, 561),
            (OpKind::Close, 456),
            (OpKind::WriteX, 315),
            (OpKind::Find, 210),
            (OpKind::Unlink, 123),
            (OpKind::Qfsinfo, 105),
            (OpKind::Qfileinfo, 105),
            (OpKind::Sfileinfo, 49),
            (OpKind::Flush, 42),
            (OpKind::Rename, 25),
            (OpKind::LockX, 2),
            (OpKind::UnlockX, 2),
            (OpKind::Mkdir, 1),
        ];
        for (k, n) in expect {
            assert_eq!(c[k.index()], n as u64, "{}", k.name());
        }
        assert_eq!(CLIENT_TINY_COUNTS.to_vec(), expect.to_vec());
        assert_eq!(mix_counts(3_573), expect.to_vec());
        assert_eq!(c[OpKind::Deltree.index()] + c[OpKind::Rmdir.index()], 0);
        // 631 opens of which 456 succeed (one per Close) and 123 create (one per Unlink)
        let opens: Vec<&Line> = lf
            .lines
            .iter()
            .filter(|l| l.kind == OpKind::NTCreateX)
            .collect();
        assert_eq!(opens.iter().filter(|l| l.fail).count(), 175);
        assert_eq!(opens.iter().filter(|l| l.create).count(), 123);
        // bytes: reads 118 cycles of 117 760 B + 65 536 + 4 096 = 13 965 312; writes 39
        // cycles + 65 536 + 4 096 + 16 384 = 4 678 656; together 18 643 968 B
        assert_eq!(SIZE_CYCLE.iter().map(|&s| s as u64).sum::<u64>(), 117_760);
        assert_eq!(lf.bytes_per_pass(), 18_643_968);
        // client-warmup: 600 lines of the same mix
        let w = builtin("client-warmup").unwrap();
        assert_eq!(w.lines.len(), 600);
        // the synthetic path and FIND_FIRST count (tbench's request sizes)
        assert_eq!(SYNTH_PATH.len(), 39);
        assert!(lf
            .lines
            .iter()
            .filter(|l| l.kind == OpKind::Find)
            .all(|l| l.count == SYNTH_FIND_COUNT && lf.paths[l.path[0] as usize] == SYNTH_PATH));
        assert!(lf
            .lines
            .iter()
            .filter(|l| matches!(l.kind, OpKind::Close | OpKind::ReadX))
            .all(|l| l.path == [NO_PATH; 2]));
    }

    #[test]
    fn sessions_are_well_formed() {
        let lf = builtin("client-tiny").unwrap();
        // every handle operation is between its file's open and close; every flushed file
        // was created and written; unlinks name created files
        let mut open: Option<u32> = None;
        let mut created = std::collections::HashSet::new();
        let mut written = std::collections::HashSet::new();
        for l in &lf.lines {
            match l.kind {
                OpKind::NTCreateX if !l.fail => {
                    assert!(open.is_none());
                    open = Some(l.file);
                    if l.create {
                        created.insert(l.file);
                    }
                }
                OpKind::Close => {
                    assert_eq!(open.take(), Some(l.file));
                }
                OpKind::ReadX
                | OpKind::Qfileinfo
                | OpKind::Sfileinfo
                | OpKind::LockX
                | OpKind::UnlockX => assert_eq!(open, Some(l.file)),
                OpKind::WriteX => {
                    assert_eq!(open, Some(l.file));
                    assert!(created.contains(&l.file));
                    written.insert(l.file);
                }
                OpKind::Flush => assert!(written.contains(&l.file)),
                OpKind::Unlink => assert!(created.remove(&l.file)),
                _ => assert!(open.is_none()),
            }
        }
        assert!(created.is_empty());
    }

    #[test]
    fn a_real_loadfile_parses_and_bad_lines_name_file_and_line() {
        let text = "\
# comment
0.010 NTCreateX \"\\clients\\client1\\a.doc\" 0x0 2 7 NT_STATUS_OK
WriteX 7 0 4096 4096 NT_STATUS_OK
ReadX 7 0 100 100 NT_STATUS_OK
Flush 7 NT_STATUS_OK
Close 7 NT_STATUS_OK
NTCreateX \"\\clients\\client1\\b.doc\" 0x0 1 -1 NT_STATUS_OBJECT_NAME_NOT_FOUND
QUERY_PATH_INFORMATION \"\\clients\\client1\\a.doc\" 1004 NT_STATUS_OK
Unlink \"\\clients\\client1\\a.doc\" 0x6 NT_STATUS_OK
";
        let lf = parse("my.txt", text).unwrap();
        let kinds: Vec<OpKind> = lf.lines.iter().map(|l| l.kind).collect();
        use OpKind::*;
        assert_eq!(
            kinds,
            vec![NTCreateX, WriteX, ReadX, Flush, Close, NTCreateX, Qpathinfo, Unlink]
        );
        assert_eq!(lf.lines[0].at_ns, Some(10_000_000));
        assert!(lf.lines[0].create && !lf.lines[5].create && lf.lines[5].fail);
        // the handle and the unlinked path resolve to the created file
        assert_eq!(lf.lines[3].file, lf.lines[0].file);
        assert_eq!(lf.lines[7].file, lf.lines[0].file);
        assert_eq!(lf.lines[1].size, 4096);
        // what tbench needs: the path texts after `\\` → `/`, the returned size, the count
        assert_eq!(
            lf.paths[lf.lines[0].path[0] as usize],
            "/clients/client1/a.doc"
        );
        assert_eq!(lf.lines[1].path, [NO_PATH; 2]); // WriteX names a handle, not a path
        assert_eq!(lf.lines[7].path[0], lf.lines[0].path[0]);
        let lf = parse(
            "t.txt",
            "NTCreateX \"\\f\" 0x0 1 1 NT_STATUS_OK\n\
             ReadX 1 0 4096 1000 NT_STATUS_OK\n\
             FIND_FIRST \"\\clients\\client1\\*.*\" 260 1366 11 NT_STATUS_OK\n\
             Rename \"\\a\\b\" \"\\a\\cd\" NT_STATUS_OK\n\
             Sleep 500 NT_STATUS_OK\n\
             Mkdir \"noslash\" NT_STATUS_OK\n",
        )
        .unwrap();
        let l = &lf.lines[1..];
        assert_eq!((l[0].size, l[0].ret_size), (4096, 1000));
        assert_eq!(l[1].count, 11);
        assert_eq!(lf.paths[l[1].path[0] as usize], "/clients/client1/*.*");
        assert_eq!(lf.paths[l[2].path[0] as usize], "/a/b");
        assert_eq!(lf.paths[l[2].path[1] as usize], "/a/cd");
        assert_eq!((l[3].kind, l[3].size), (OpKind::Sleep, 500));
        // dbench takes a word as a path only if it starts with `/`
        assert_eq!(l[4].path[0], NO_PATH);
        let e = parse("my.txt", "Close 3 NT_STATUS_OK\n").unwrap_err();
        assert_eq!(e, "my.txt:1: 'Close': handle 3 is not open");
        let e = parse("my.txt", "\nFrobnicate 1 NT_STATUS_OK\n").unwrap_err();
        assert_eq!(e, "my.txt:2: unknown operation 'Frobnicate'");
        let e = parse("my.txt", "ReadX 1 0\n").unwrap_err();
        assert!(e.starts_with("my.txt:1: 'ReadX'"), "{e}");
    }
}
