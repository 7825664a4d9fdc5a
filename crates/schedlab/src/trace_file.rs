//! Writing a trace file atomically: records stream into a temporary body file while the run
//! goes; at the end the kernel's header (which states the number of entries) is written,
//! followed by the body, into a second temporary file that is then renamed onto the target.
//! A failed run removes its temporary files, so no half-written trace is ever left behind.

use schedlab_sched::TraceSink;
use schedlab_trace::{write_header, write_record, TraceRecord};
use std::cell::RefCell;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;

struct Body {
    out: BufWriter<File>,
    count: u64,
    error: Option<io::Error>,
}

/// A trace being written.
pub struct TraceFile {
    target: PathBuf,
    body_path: PathBuf,
    body: Rc<RefCell<Body>>,
    nr_cpus: u32,
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
    }
}

fn tmp_path(target: &Path, suffix: &str) -> PathBuf {
    let mut name = target
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(suffix);
    target.with_file_name(name)
}

impl TraceFile {
    pub fn create(target: &Path, nr_cpus: u32) -> io::Result<TraceFile> {
        if target.is_dir() {
            return Err(io::Error::other("is a directory"));
        }
        let body_path = tmp_path(target, ".schedlab-body.tmp");
        let f = File::create(&body_path)?;
        Ok(TraceFile {
            target: target.to_path_buf(),
            body_path,
            body: Rc::new(RefCell::new(Body {
                out: BufWriter::new(f),
                count: 0,
                error: None,
            })),
            nr_cpus,
        })
    }

    pub fn sink(&self) -> Sink {
        Sink(self.body.clone())
    }

    /// Completes the file; on error removes the temporaries and reports the path.
    pub fn finish(self) -> Result<PathBuf, (PathBuf, io::Error)> {
        let target = self.target.clone();
        let res = self.finish_inner();
        if let Err(e) = res {
            let _ = std::fs::remove_file(&self.body_path);
            let _ = std::fs::remove_file(tmp_path(&self.target, ".schedlab.tmp"));
            return Err((target, e));
        }
        Ok(target)
    }

    fn finish_inner(&self) -> io::Result<()> {
        let count = {
            let mut b = self.body.borrow_mut();
            if let Some(e) = b.error.take() {
                return Err(e);
            }
            b.out.flush()?;
            b.count
        };
        let full = tmp_path(&self.target, ".schedlab.tmp");
        {
            let mut out = BufWriter::new(File::create(&full)?);
            write_header(&mut out, count, self.nr_cpus)?;
            let mut body = File::open(&self.body_path)?;
            io::copy(&mut body, &mut out)?;
            out.flush()?;
        }
        std::fs::remove_file(&self.body_path)?;
        std::fs::rename(&full, &self.target)?;
        Ok(())
    }

    /// Abandons the trace (failed run): nothing is left on disk.
    pub fn discard(self) {
        let _ = std::fs::remove_file(&self.body_path);
    }
}

impl Drop for Body {
    fn drop(&mut self) {
        let _ = self.out.flush();
    }
}
