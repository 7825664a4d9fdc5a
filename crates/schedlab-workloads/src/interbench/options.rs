//! interbench's command line (workloads.md §6.1; `getopt(argc, argv,
//! "hl:L:B:N:ut:bcnrC:I:m:w:x:W:X:")` of interbench 0.31) plus schedlab's own model parameters,
//! which are long options: interbench itself only knows short ones (plain `getopt`, no
//! `getopt_long`), so no `--name` can clash with a real flag.
//!
//! | option | effect in the model |
//! |---|---|
//! | `-r` | real-time benchmarks: the benchmarked emulation thread runs SCHED_FIFO 95; benchmarks Audio, Video |
//! | `-t N` | seconds per (benchmark, load) pair, rounded **up** to a multiple of 10 (default 30) |
//! | `-u` | "imitate uniprocessor": main pins itself to CPU 0 before it forks |
//! | `-w LOAD` / `-x LOAD` | add / exclude a load (default: all) |
//! | `-W BENCH` / `-X BENCH` | add / exclude a benchmark (default: all) |
//! | `-L N` | Burn and Ring threads (default: online CPUs) |
//! | `-B N` / `-N N` | nice of the bench / load process (−20..19) |
//! | `-c` | console only: no log file — nothing to model, accepted |
//! | `-m TEXT` | `Comment: TEXT` line |
//! | `-l N`, `-b` | loops per ms / recalibrate: accepted, no effect (the model burns calibrated fixed work, §6.1) |
//! | `-C`, `-I` (Custom), `-h`, `-n` | refused |
//! | `--units=us\|100ns` | schedlab: printed format — `us` = interbench 0.31, `100ns` = seed 001's modified build with median (default `us`) |
//! | `--timekeeper-affinity=cpu0\|original_mask` | schedlab: §6.1 snapshot parameter (default `cpu0`, 0.31 `2b42050`) |
//! | `--write-file-kib=N` | schedlab: size of the Write (and Read) load's file in KiB (default 153600 = 150 MiB, seed 001's RAM root fs, §12.2) |
//! | `--io-batch=N` | schedlab: most 4 KiB writes/reads per simulator event (default 1; see model.rs for when a larger N is exact) |
//! | `--block-every-us=N` | schedlab: mean writer CPU time between `maybe_block()` blocks (default 20000, rt-dl.md §5.2) |
//! | `--block-us=MIN-MAX` | schedlab: block length range (default 100-2000) |
//! | `--waker-us=MIN-MAX` | schedlab: the RT waker's own work `w_rt` (default 50-3000) |
//!
//! Numbers are read strictly (schedlab's rule), where interbench uses `atoi`.

use crate::cmdline::{self, ArgKind, OptionError, Scanner, Spec, Style};

const PROG: &str = "interbench";

/// One of interbench's emulated tasks, in the order of its `threadlist[]` (which is also the
/// order of benchmarks and loads in the output).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Task {
    None,
    Audio,
    Video,
    X,
    Gaming,
    Burn,
    Write,
    Read,
    Ring,
    Compile,
    Memload,
    Hack,
    Custom,
}

impl Task {
    /// `threadlist[]` order.
    pub const ALL: [Task; 13] = [
        Task::None,
        Task::Audio,
        Task::Video,
        Task::X,
        Task::Gaming,
        Task::Burn,
        Task::Write,
        Task::Read,
        Task::Ring,
        Task::Compile,
        Task::Memload,
        Task::Hack,
        Task::Custom,
    ];

    /// The label interbench prints and matches (`load_index`, case-sensitive `strcmp`).
    pub fn label(self) -> &'static str {
        match self {
            Task::None => "None",
            Task::Audio => "Audio",
            Task::Video => "Video",
            Task::X => "X",
            Task::Gaming => "Gaming",
            Task::Burn => "Burn",
            Task::Write => "Write",
            Task::Read => "Read",
            Task::Ring => "Ring",
            Task::Compile => "Compile",
            Task::Memload => "Memload",
            Task::Hack => "Hack",
            Task::Custom => "Custom",
        }
    }

    fn from_label(s: &str) -> Option<Task> {
        Task::ALL.into_iter().find(|t| t.label() == s)
    }

    /// `.bench` (without `-r`) / `.rtbench` (with `-r`) of `threadlist[]`.
    pub fn is_bench(self, rt: bool) -> bool {
        match self {
            Task::Audio | Task::Video => true,
            Task::X | Task::Gaming => !rt,
            _ => false,
        }
    }

    /// `.load` / `.rtload` (equal for every entry). Memload is dropped because the model's
    /// machines have no swap (interbench's `get_ram()` clears it when `SwapTotal` is 0, as on
    /// seed 001's board); Hack is disabled in 0.31; Custom needs `-C`/`-I` (refused).
    pub fn is_load(self) -> bool {
        matches!(
            self,
            Task::None
                | Task::Video
                | Task::X
                | Task::Burn
                | Task::Write
                | Task::Read
                | Task::Ring
                | Task::Compile
        )
    }
}

/// Output units and format (schedlab's `--units`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Units {
    /// interbench 0.31: µs with `-r`, ms without; 0.31's "SD"; no median, no summary row.
    Us,
    /// Seed 001's modified build: 100 ns units, true SD, median, pooled summary row.
    Ns100,
}

/// §6.1 `timekeeper_affinity`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TkAffinity {
    /// 0.31 `2b42050`: timekeepers stay where `-u` put the process (CPU 0).
    Cpu0,
    /// head `e612a65`: timekeepers reset their affinity to main's original mask.
    OriginalMask,
}

/// Default Write file: 150 MiB (seed 001's modified build on a RAM root fs, §12.2).
pub const DEFAULT_WRITE_FILE_KIB: u64 = 150 * 1024;

/// The writer-blocking parameters (rt-dl.md §5.2), ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockModel {
    /// Mean time between blocks of a writer that runs all the time.
    pub every_ns: u64,
    pub b_min_ns: u64,
    pub b_max_ns: u64,
    pub w_min_ns: u64,
    pub w_max_ns: u64,
}

impl Default for BlockModel {
    fn default() -> Self {
        BlockModel {
            every_ns: 20_000_000,
            b_min_ns: 100_000,
            b_max_ns: 2_000_000,
            w_min_ns: 50_000,
            w_max_ns: 3_000_000,
        }
    }
}

/// The parsed command line.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    pub rt: bool,
    /// `-t` as rounded up to a multiple of 10 (seconds).
    pub duration_s: u64,
    pub uniprocessor: bool,
    /// Loads in output order (selected, not excluded, load-capable).
    pub loads: Vec<Task>,
    /// Benchmarks in output order.
    pub benches: Vec<Task>,
    /// `-L` (None = online CPUs).
    pub cpu_load: Option<u32>,
    pub bench_nice: i32,
    pub load_nice: i32,
    pub comment: Option<String>,
    pub console_only: bool,
    pub units: Units,
    pub tk_affinity: TkAffinity,
    pub write_file_kib: u64,
    /// `--io-batch`: most 4 KiB writes/reads issued as one simulator event (model.rs).
    pub io_batch: u64,
    /// `--block-every-us`, `--block-us`, `--waker-us` (rt-dl.md §5.2).
    pub block_model: BlockModel,
    /// Accepted words with no effect, one line each.
    pub warnings: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum K {
    H,
    LoopsPerMs,
    CpuLoad,
    BenchNice,
    LoadNice,
    Uni,
    Time,
    Bench,
    Console,
    N,
    Rt,
    CustomC,
    CustomI,
    Comment,
    AddLoad,
    ExLoad,
    AddBench,
    ExBench,
    Units,
    TkAff,
    WriteKib,
    IoBatch,
    BlockEvery,
    BlockUs,
    WakerUs,
}

const SPECS: &[Spec<K>] = &[
    Spec::new(Some('h'), None, ArgKind::None, K::H),
    Spec::new(Some('l'), None, ArgKind::Required, K::LoopsPerMs),
    Spec::new(Some('L'), None, ArgKind::Required, K::CpuLoad),
    Spec::new(Some('B'), None, ArgKind::Required, K::BenchNice),
    Spec::new(Some('N'), None, ArgKind::Required, K::LoadNice),
    Spec::new(Some('u'), None, ArgKind::None, K::Uni),
    Spec::new(Some('t'), None, ArgKind::Required, K::Time),
    Spec::new(Some('b'), None, ArgKind::None, K::Bench),
    Spec::new(Some('c'), None, ArgKind::None, K::Console),
    Spec::new(Some('n'), None, ArgKind::None, K::N),
    Spec::new(Some('r'), None, ArgKind::None, K::Rt),
    Spec::new(Some('C'), None, ArgKind::Required, K::CustomC),
    Spec::new(Some('I'), None, ArgKind::Required, K::CustomI),
    Spec::new(Some('m'), None, ArgKind::Required, K::Comment),
    Spec::new(Some('w'), None, ArgKind::Required, K::AddLoad),
    Spec::new(Some('x'), None, ArgKind::Required, K::ExLoad),
    Spec::new(Some('W'), None, ArgKind::Required, K::AddBench),
    Spec::new(Some('X'), None, ArgKind::Required, K::ExBench),
    Spec::new(None, Some("units"), ArgKind::Required, K::Units),
    Spec::new(
        None,
        Some("timekeeper-affinity"),
        ArgKind::Required,
        K::TkAff,
    ),
    Spec::new(None, Some("write-file-kib"), ArgKind::Required, K::WriteKib),
    Spec::new(None, Some("io-batch"), ArgKind::Required, K::IoBatch),
    Spec::new(
        None,
        Some("block-every-us"),
        ArgKind::Required,
        K::BlockEvery,
    ),
    Spec::new(None, Some("block-us"), ArgKind::Required, K::BlockUs),
    Spec::new(None, Some("waker-us"), ArgKind::Required, K::WakerUs),
];

/// Default `--io-batch`: one event per 4 KiB write/read, exact under every preemption model
/// (model.rs explains why larger batches are exact under PREEMPT_RT and FULL only).
pub const DEFAULT_IO_BATCH: u64 = 1;

/// `MIN-MAX` in µs (each 0..=10 s, MIN ≤ MAX) → ns.
fn us_range(option: &str, v: &str) -> Result<(u64, u64), OptionError> {
    let bad = || OptionError::BadValue {
        program: PROG,
        option: option.to_string(),
        reason: format!("expected MIN-MAX in µs (e.g. 100-2000), got '{v}'"),
    };
    let (a, b) = v.split_once('-').ok_or_else(bad)?;
    let a = cmdline::int_in(PROG, option, a, 0, 10_000_000, "µs 0..10000000").map_err(|_| bad())?;
    let b = cmdline::int_in(PROG, option, b, 0, 10_000_000, "µs 0..10000000").map_err(|_| bad())?;
    if a > b {
        return Err(bad());
    }
    Ok((a as u64 * 1000, b as u64 * 1000))
}

/// Parses the words after `interbench`.
pub fn parse(args: &[String]) -> Result<Options, OptionError> {
    let style = Style {
        abbreviations: false,
        negation: false,
    };
    let mut sc = Scanner::new(PROG, SPECS, style, args);
    let mut o = Options {
        rt: false,
        duration_s: 30,
        uniprocessor: false,
        loads: Vec::new(),
        benches: Vec::new(),
        cpu_load: None,
        bench_nice: 0,
        load_nice: 0,
        comment: None,
        console_only: false,
        units: Units::Us,
        tk_affinity: TkAffinity::Cpu0,
        write_file_kib: DEFAULT_WRITE_FILE_KIB,
        io_batch: DEFAULT_IO_BATCH,
        block_model: BlockModel::default(),
        warnings: Vec::new(),
    };
    let mut t_given: Option<u64> = None;
    let (mut sel_l, mut ex_l, mut sel_b, mut ex_b) = (vec![], vec![], vec![], vec![]);
    while let Some(f) = sc.next_option() {
        let f = f?;
        let v = cmdline::required(&f).to_string();
        let name = |kind: &str| -> Result<Task, OptionError> {
            Task::from_label(&v).ok_or_else(|| OptionError::BadValue {
                program: PROG,
                option: f.spelled.clone(),
                reason: format!(
                    "Unknown {kind} \"{v}\" (names: None Audio Video X Gaming Burn Write Read \
                     Ring Compile Memload Hack Custom)"
                ),
            })
        };
        match f.key {
            K::H | K::N => {
                return Err(OptionError::NotModelled {
                    program: PROG,
                    option: f.spelled,
                    detail: "interbench prints its usage and exits".into(),
                })
            }
            K::CustomC | K::CustomI => {
                return Err(OptionError::NotModelled {
                    program: PROG,
                    option: f.spelled,
                    detail: "the Custom benchmark/load is not modelled".into(),
                })
            }
            K::LoopsPerMs => {
                cmdline::positive_u32(PROG, &f.spelled, &v)?;
                o.warnings.push(format!(
                    "interbench: -l {v}: no effect (the model burns calibrated fixed work, \
                     workloads.md §6.1)"
                ));
            }
            K::Bench => o.warnings.push(
                "interbench: -b: no effect (calibration is not simulated; the model burns \
                 calibrated fixed work)"
                    .into(),
            ),
            K::CpuLoad => o.cpu_load = Some(cmdline::positive_u32(PROG, &f.spelled, &v)?),
            K::BenchNice => {
                o.bench_nice =
                    cmdline::int_in(PROG, &f.spelled, &v, -20, 19, "a nice value -20..19")? as i32
            }
            K::LoadNice => {
                o.load_nice =
                    cmdline::int_in(PROG, &f.spelled, &v, -20, 19, "a nice value -20..19")? as i32
            }
            K::Uni => o.uniprocessor = true,
            K::Time => {
                let s = cmdline::int_in(
                    PROG,
                    &f.spelled,
                    &v,
                    1,
                    i64::MAX,
                    "a positive number of seconds",
                )? as u64;
                cmdline::check_run_secs(PROG, &f.spelled, &v, s as u128)?;
                t_given = Some(s);
            }
            K::Console => o.console_only = true,
            K::Rt => o.rt = true,
            K::Comment => o.comment = Some(v),
            K::AddLoad => sel_l.push(name("load")?),
            K::ExLoad => ex_l.push(name("load")?),
            K::AddBench => sel_b.push(name("bench")?),
            K::ExBench => ex_b.push(name("bench")?),
            K::Units => {
                o.units = match v.as_str() {
                    "us" => Units::Us,
                    "100ns" => Units::Ns100,
                    _ => {
                        return Err(OptionError::BadValue {
                            program: PROG,
                            option: f.spelled,
                            reason: format!("expected us or 100ns, got '{v}'"),
                        })
                    }
                }
            }
            K::TkAff => {
                o.tk_affinity = match v.as_str() {
                    "cpu0" => TkAffinity::Cpu0,
                    "original_mask" => TkAffinity::OriginalMask,
                    _ => {
                        return Err(OptionError::BadValue {
                            program: PROG,
                            option: f.spelled,
                            reason: format!("expected cpu0 or original_mask, got '{v}'"),
                        })
                    }
                }
            }
            K::IoBatch => {
                o.io_batch = cmdline::int_in(PROG, &f.spelled, &v, 1, 1 << 20, "1..1048576")? as u64
            }
            K::BlockEvery => {
                o.block_model.every_ns = cmdline::int_in(
                    PROG,
                    &f.spelled,
                    &v,
                    1,
                    3_600_000_000,
                    "a positive number of µs",
                )? as u64
                    * 1000
            }
            K::BlockUs => {
                let (a, b) = us_range(&f.spelled, &v)?;
                o.block_model.b_min_ns = a;
                o.block_model.b_max_ns = b;
            }
            K::WakerUs => {
                let (a, b) = us_range(&f.spelled, &v)?;
                o.block_model.w_min_ns = a;
                o.block_model.w_max_ns = b;
            }
            K::WriteKib => {
                o.write_file_kib = cmdline::int_in(
                    PROG,
                    &f.spelled,
                    &v,
                    4,
                    1 << 30,
                    "a size in KiB, 4..1073741824",
                )? as u64
            }
        }
    }
    if let Some(arg) = sc.positionals().first() {
        // getopt leaves them and interbench ignores them; schedlab refuses stray words
        return Err(OptionError::UnexpectedArgument {
            program: PROG,
            arg: arg.clone(),
        });
    }
    if let Some(t) = t_given {
        o.duration_s = t;
    }
    // "Make benchmark a multiple of 10 seconds for proper range of X loads"
    if !o.duration_s.is_multiple_of(10) {
        o.duration_s += 10 - o.duration_s % 10;
    }
    let pick = |sel: &[Task], ex: &[Task], ok: &dyn Fn(Task) -> bool| -> Vec<Task> {
        Task::ALL
            .into_iter()
            .filter(|t| (sel.is_empty() || sel.contains(t)) && !ex.contains(t) && ok(*t))
            .collect()
    };
    let rt = o.rt;
    o.benches = pick(&sel_b, &ex_b, &|t| t.is_bench(rt));
    o.loads = pick(&sel_l, &ex_l, &|t| t.is_load());
    for t in sel_l.iter().chain(&sel_b) {
        let why = match t {
            Task::Memload => Some("Memload is dropped without swap, as interbench does"),
            Task::Hack => Some("Hack is disabled in interbench 0.31"),
            _ => None,
        };
        if let Some(why) = why {
            let m = format!("interbench: {}: {why}", t.label());
            if !o.warnings.contains(&m) {
                o.warnings.push(m);
            }
        }
    }
    Ok(o)
}

impl Options {
    /// The (benchmark, load) pairs in the order interbench runs them: for each benchmark every
    /// selected load except the benchmark itself (`j == i` is skipped).
    pub fn pairs(&self) -> Vec<(Task, Task)> {
        let mut v = Vec::new();
        for &b in &self.benches {
            for &l in &self.loads {
                if l != b {
                    v.push((b, l));
                }
            }
        }
        v
    }

    /// Burn/Ring thread count on a machine with `ncpus` online CPUs.
    pub fn cpu_load(&self, ncpus: usize) -> u32 {
        self.cpu_load.unwrap_or(ncpus as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Options, OptionError> {
        let v: Vec<String> = s.split_whitespace().map(String::from).collect();
        parse(&v)
    }

    #[test]
    fn seed_001_line() {
        let o = p("-r -t 60 -u -w Write -W Audio").unwrap();
        assert!(o.rt && o.uniprocessor);
        assert_eq!(o.duration_s, 60);
        assert_eq!(o.pairs(), vec![(Task::Audio, Task::Write)]);
        assert_eq!(o.units, Units::Us);
        assert_eq!(o.tk_affinity, TkAffinity::Cpu0);
    }

    #[test]
    fn duration_rounds_up_to_ten_seconds() {
        // interbench: if (duration % 10) duration += 10 - duration % 10
        assert_eq!(p("-t 1").unwrap().duration_s, 10);
        assert_eq!(p("-t 10").unwrap().duration_s, 10);
        assert_eq!(p("-t 61").unwrap().duration_s, 70);
        assert_eq!(p("").unwrap().duration_s, 30);
    }

    #[test]
    fn default_selection_follows_threadlist_flags() {
        // -r: rtbench = Audio, Video; loads None..Compile (Memload dropped, Hack disabled)
        let o = p("-r").unwrap();
        assert_eq!(o.benches, vec![Task::Audio, Task::Video]);
        let loads: Vec<&str> = o.loads.iter().map(|t| t.label()).collect();
        assert_eq!(
            loads,
            ["None", "Video", "X", "Burn", "Write", "Read", "Ring", "Compile"]
        );
        // without -r: Audio, Video, X, Gaming
        assert_eq!(
            p("").unwrap().benches,
            vec![Task::Audio, Task::Video, Task::X, Task::Gaming]
        );
        // a benchmark is never its own load: Video bench skips the Video load
        let o = p("-W Video -w Video -w None").unwrap();
        assert_eq!(o.pairs(), vec![(Task::Video, Task::None)]);
        // -x / -X exclude
        let o = p("-r -X Video -x Ring -x Compile").unwrap();
        assert_eq!(o.benches, vec![Task::Audio]);
        assert_eq!(o.loads.len(), 6);
    }

    #[test]
    fn schedlab_parameters() {
        let o =
            p("--units=100ns --timekeeper-affinity original_mask --write-file-kib 1024").unwrap();
        assert_eq!(o.units, Units::Ns100);
        assert_eq!(o.tk_affinity, TkAffinity::OriginalMask);
        assert_eq!(o.write_file_kib, 1024);
    }

    #[test]
    fn memload_and_hack_give_warnings_and_no_rows() {
        let o = p("-w Memload -w Hack").unwrap();
        assert!(o.loads.is_empty());
        assert_eq!(o.warnings.len(), 2, "{:?}", o.warnings);
        assert!(o.warnings[0].contains("swap"), "{:?}", o.warnings);
    }

    #[test]
    fn errors_name_the_option_and_value() {
        for (line, needle) in [
            ("-w Foo", "Unknown load \"Foo\""),
            ("-W audio", "Unknown bench \"audio\""),
            ("-t 0", "-t: expected a positive number of seconds, got '0'"),
            ("-t 6x", "got '6x'"),
            ("-L 0", "-L: expected a positive integer, got '0'"),
            ("-N 20", "-N: expected a nice value"),
            ("-C 50 -I 1000", "-C: not modelled"),
            ("-h", "-h: not modelled"),
            ("-n", "-n: not modelled"),
            ("-q", "unknown option '-q'"),
            ("-t", "-t: requires an argument"),
            ("--units=ms", "--units: expected us or 100ns, got 'ms'"),
            ("--timekeeper-affinity=all", "got 'all'"),
            ("--write-file-kib=0", "--write-file-kib"),
            ("--frobnicate", "unknown option '--frobnicate'"),
            ("-r stray", "unexpected argument 'stray'"),
        ] {
            let e = p(line).unwrap_err().to_string();
            assert!(e.starts_with("interbench: "), "{line}: {e}");
            assert!(e.contains(needle), "{line}: {e}");
        }
    }

    #[test]
    fn no_effect_options_warn() {
        let o = p("-l 5000 -b -c -m hello").unwrap();
        assert_eq!(o.warnings.len(), 2);
        assert!(o.console_only);
        assert_eq!(o.comment.as_deref(), Some("hello"));
    }
}
