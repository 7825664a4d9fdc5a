//! Writing a trace file you can trust.
//!
//! - A regular file (or a name that does not exist yet) is written to a temporary file in the
//!   target's own directory and renamed onto the target only when the run succeeded; a failed
//!   or interrupted run removes the temporary file (on SIGINT/SIGTERM through
//!   [`remove_temp_files_and_exit`], which the binary's signal handler calls).
//! - A symbolic link is followed: the file written (and its temporary) is in the directory of
//!   the link's target, and the link stays a link.
//! - A target that is not a regular file (a FIFO, a device such as `/dev/null`, or `-` for
//!   stdout) is written directly and never replaced. Such a stream gets the records without
//!   the header, as `/sys/kernel/tracing/trace_pipe` prints them: the header states the number
//!   of entries, which is known only at the end.
//! - The trace is written once, header first: a regular file starts with a header whose
//!   entries line is padded to the width of the largest count (spaces before `#P:`); at the
//!   end the real count is written over it in place.
//! - The size is estimated once 1/64 of the simulated time has passed (and checked again as it
//!   grows): above [`WARN_BYTES`] a warning is printed, and above `--trace-limit` the trace is
//!   refused (the run fails with the temporary file removed).

use schedlab_sched::TraceSink;
use schedlab_trace::{write_header, write_record, TraceRecord};
use std::cell::RefCell;
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Mutex;

/// Above this expected size a trace gets a warning (1 GiB).
pub const WARN_BYTES: u64 = 1 << 30;

/// Temporary files being written; removed by [`remove_temp_files_and_exit`] on a signal.
static TEMP_FILES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn temp_files() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    TEMP_FILES.lock().unwrap_or_else(|p| p.into_inner())
}

/// Removes every temporary output file, prints `msg` on stderr and exits with `code`. The
/// list stays locked until the process is gone, so no new temporary file appears meanwhile.
pub fn remove_temp_files_and_exit(code: i32, msg: &str) -> ! {
    let files = temp_files();
    for f in files.iter() {
        let _ = std::fs::remove_file(f);
    }
    let _ = writeln!(io::stderr(), "{msg}");
    std::process::exit(code)
}

/// Where the bytes go.
enum Dest {
    File(File),
    Stdout(io::Stdout),
}

impl Write for Dest {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        match self {
            Dest::File(f) => f.write(b),
            Dest::Stdout(s) => s.write(b),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Dest::File(f) => f.flush(),
            Dest::Stdout(s) => s.flush(),
        }
    }
}

/// Counts the bytes that reach the destination.
struct Counting {
    dest: Dest,
    bytes: u64,
}

impl Write for Counting {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        let n = self.dest.write(b)?;
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.dest.flush()
    }
}

struct Body {
    out: BufWriter<Counting>,
    count: u64,
    error: Option<io::Error>,
    /// Simulated length of the run, for the size estimate.
    duration_ns: u64,
    limit: Option<u64>,
    /// Next simulated time at which the size is estimated.
    next_check_ns: u64,
    warned: bool,
    label: String,
}

impl Body {
    fn bytes(&self) -> u64 {
        self.out.get_ref().bytes + self.out.buffer().len() as u64
    }

    /// Estimates the final size from the bytes so far; warns or refuses.
    fn check_size(&mut self, now_ns: u64) {
        let bytes = self.bytes();
        let estimate =
            (u128::from(bytes) * u128::from(self.duration_ns) / u128::from(now_ns.max(1))) as u64;
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        match self.limit {
            Some(limit) if estimate > limit || bytes > limit => {
                self.error = Some(io::Error::other(format!(
                    "the trace would be about {:.1} GiB ({:.2} GiB per simulated second), more \
                     than --trace-limit {:.1} GiB; shorten --duration or raise the limit",
                    gib(estimate.max(bytes)),
                    gib(bytes) / (now_ns.max(1) as f64 / 1e9),
                    gib(limit)
                )));
            }
            None if !self.warned && estimate > WARN_BYTES => {
                self.warned = true;
                let _ = writeln!(
                    io::stderr(),
                    "schedlab: warning: trace {}: about {:.1} GiB expected ({:.2} GiB per \
                     simulated second); --trace-limit SIZE refuses such a trace",
                    self.label,
                    gib(estimate),
                    gib(bytes) / (now_ns.max(1) as f64 / 1e9)
                );
            }
            _ => {}
        }
        // again each time another 1/64 of the run has passed
        self.next_check_ns = now_ns.saturating_add((self.duration_ns / 64).max(1));
    }
}

/// The kernel's sink: appends records to the body.
pub struct Sink(Rc<RefCell<Body>>);

impl TraceSink for Sink {
    fn record(&mut self, r: &TraceRecord<&str>) {
        let mut b = self.0.borrow_mut();
        if b.error.is_some() {
            return;
        }
        if let Err(e) = write_record(&mut b.out, r) {
            b.error = Some(e);
            return;
        }
        b.count += 1;
        if r.ts_ns >= b.next_check_ns {
            b.check_size(r.ts_ns);
        }
    }
}

/// How the target is written.
enum Mode {
    /// Temporary file `tmp` in the directory of `dest`, renamed onto `dest` at the end.
    Atomic { tmp: PathBuf, dest: PathBuf },
    /// Written in place (FIFO, device, stdout): no header, never replaced.
    Stream,
}

/// A trace being written.
pub struct TraceFile {
    /// The path as given (messages and results).
    target: PathBuf,
    mode: Mode,
    body: Rc<RefCell<Body>>,
    nr_cpus: u32,
}

/// Follows symbolic links (also dangling ones: the file is created where the link points).
fn resolve_links(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let t = std::fs::read_link(&p)?;
                p = if t.is_absolute() {
                    t
                } else {
                    p.parent().unwrap_or(Path::new("")).join(t)
                };
            }
            _ => return Ok(p),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// The header with its entries line padded to the width of the largest count, so that the
/// final header has the same length as the placeholder written first.
fn padded_header(count: u64, nr_cpus: u32) -> io::Result<Vec<u8>> {
    let mut widest = Vec::new();
    write_header(&mut widest, u64::MAX, nr_cpus)?;
    let mut h = Vec::new();
    write_header(&mut h, count, nr_cpus)?;
    let pad = widest.len() - h.len();
    let at = h
        .windows(3)
        .position(|w| w == b"#P:")
        .ok_or_else(|| io::Error::other("trace header without #P:"))?;
    h.splice(at..at, std::iter::repeat_n(b' ', pad));
    Ok(h)
}

/// Creates a fresh temporary file in `dir` (short name, so that a target name as long as the
/// file system allows still works) and registers it for removal on a signal.
fn create_temp(dir: &Path) -> io::Result<(PathBuf, File)> {
    let mut files = temp_files();
    for i in 0..1000u32 {
        let p = dir.join(format!(".schedlab-{}-{i}.tmp", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&p) {
            Ok(f) => {
                files.push(p.clone());
                return Ok((p, f));
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("no free temporary file name"))
}

fn forget_temp(p: &Path) {
    temp_files().retain(|f| f != p);
}

/// Writes `bytes` to `path` as a whole or not at all: into a temporary file in the target's
/// directory (removed on error or on SIGINT/SIGTERM), renamed onto `path` once complete. A
/// symbolic link is followed and stays a link. Used for figures and HTML pages.
pub fn write_file_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dest = resolve_links(path)?;
    if dest.is_dir() {
        return Err(io::Error::other("is a directory"));
    }
    let dir = match dest.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !dir.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("directory {} does not exist", dir.display()),
        ));
    }
    let (tmp, mut f) = create_temp(&dir)?;
    let res = f
        .write_all(bytes)
        .and_then(|_| f.sync_all())
        .and_then(|_| std::fs::rename(&tmp, &dest));
    if res.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    forget_temp(&tmp);
    res
}

impl TraceFile {
    /// Opens the target. `duration_ns` is the simulated length of the run (for the size
    /// estimate); `limit` refuses a trace expected above that many bytes.
    pub fn create(
        target: &Path,
        nr_cpus: u32,
        duration_ns: u64,
        limit: Option<u64>,
    ) -> io::Result<TraceFile> {
        let (mode, dest) = if target == Path::new("-") {
            (Mode::Stream, Dest::Stdout(io::stdout()))
        } else {
            let dest = resolve_links(target)?;
            match std::fs::metadata(&dest) {
                Ok(m) if m.is_dir() => return Err(io::Error::other("is a directory")),
                Ok(m) if !m.is_file() => {
                    // FIFO, device, socket: write in place, never replace or truncate
                    let f = OpenOptions::new().write(true).open(&dest)?;
                    (Mode::Stream, Dest::File(f))
                }
                _ => {
                    let dir = match dest.parent() {
                        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                        _ => PathBuf::from("."),
                    };
                    if !dir.is_dir() {
                        return Err(io::Error::new(
                            io::ErrorKind::NotFound,
                            format!("directory {} does not exist", dir.display()),
                        ));
                    }
                    let (tmp, f) = create_temp(&dir)?;
                    (Mode::Atomic { tmp, dest }, Dest::File(f))
                }
            }
        };
        let mut out = BufWriter::with_capacity(1 << 16, Counting { dest, bytes: 0 });
        if let Mode::Atomic { tmp, .. } = &mode {
            if let Err(e) = out.write_all(&padded_header(0, nr_cpus)?) {
                let _ = std::fs::remove_file(tmp);
                forget_temp(tmp);
                return Err(e);
            }
        }
        Ok(TraceFile {
            target: target.to_path_buf(),
            mode,
            body: Rc::new(RefCell::new(Body {
                out,
                count: 0,
                error: None,
                duration_ns,
                limit,
                next_check_ns: (duration_ns / 64).max(1),
                warned: false,
                label: target.display().to_string(),
            })),
            nr_cpus,
        })
    }

    pub fn sink(&self) -> Sink {
        Sink(self.body.clone())
    }

    /// Completes the file; on error removes the temporary file and reports the path.
    pub fn finish(self) -> Result<PathBuf, (PathBuf, io::Error)> {
        let res = self.finish_inner();
        if let Mode::Atomic { tmp, .. } = &self.mode {
            if res.is_err() {
                let _ = std::fs::remove_file(tmp);
            }
            forget_temp(tmp);
        }
        res.map(|_| self.target.clone())
            .map_err(|e| (self.target.clone(), e))
    }

    fn finish_inner(&self) -> io::Result<()> {
        let mut b = self.body.borrow_mut();
        if let Some(e) = b.error.take() {
            return Err(e);
        }
        b.out.flush()?;
        let count = b.count;
        match &self.mode {
            Mode::Stream => Ok(()),
            Mode::Atomic { tmp, dest } => {
                let Dest::File(f) = &mut b.out.get_mut().dest else {
                    unreachable!("an atomic trace is a file")
                };
                f.seek(SeekFrom::Start(0))?;
                f.write_all(&padded_header(count, self.nr_cpus)?)?;
                f.sync_all()?;
                std::fs::rename(tmp, dest)
            }
        }
    }

    /// Abandons the trace (failed run): nothing is left on disk.
    pub fn discard(self) {
        if let Mode::Atomic { tmp, .. } = &self.mode {
            let _ = std::fs::remove_file(tmp);
            forget_temp(tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A body that has already written `bytes` of a 64 s run.
    fn body(limit: Option<u64>, bytes: u64) -> Body {
        let f = OpenOptions::new().write(true).open("/dev/null").unwrap();
        Body {
            out: BufWriter::new(Counting {
                dest: Dest::File(f),
                bytes,
            }),
            count: 0,
            error: None,
            duration_ns: 64_000_000_000,
            limit,
            next_check_ns: 1_000_000_000,
            warned: false,
            label: "t.trace".into(),
        }
    }

    #[test]
    fn size_estimate_warns_above_1_gib_and_refuses_above_the_limit() {
        let s = 1_000_000_000;
        // 20 MiB in the first of 64 s: 64 × 20 MiB = 1.25 GiB expected, above 1 GiB: a warning
        let mut b = body(None, 20 << 20);
        b.check_size(s);
        assert!(b.warned && b.error.is_none());
        // 10 MiB in 1 s: 640 MiB expected, no warning
        let mut b = body(None, 10 << 20);
        b.check_size(s);
        assert!(!b.warned);
        // with --trace-limit 1G the 1.25 GiB trace is refused
        let mut b = body(Some(1 << 30), 20 << 20);
        b.check_size(s);
        let e = b.error.take().unwrap().to_string();
        assert!(e.contains("more than --trace-limit 1.0 GiB"), "{e}");
        // the next estimate comes one 64th of the run (1 s) later
        assert_eq!(b.next_check_ns, 2 * s);
    }

    #[test]
    fn padded_header_has_one_length_and_states_the_count() {
        let a = padded_header(0, 4).unwrap();
        let b = padded_header(123_456, 4).unwrap();
        assert_eq!(a.len(), b.len());
        let t = String::from_utf8(b).unwrap();
        assert!(t.contains("# entries-in-buffer/entries-written: 123456/123456 "));
        // the padding is spaces before #P:, on the entries line only
        let line = t.lines().nth(2).unwrap();
        assert!(line.ends_with(" #P:4"), "{line}");
        // widest count: 20 digits twice, then the kernel's three spaces
        assert!(padded_header(u64::MAX, 4)
            .unwrap()
            .windows(4)
            .any(|w| w == b"5   "));
    }
}
