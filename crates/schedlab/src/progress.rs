//! Progress bars on stderr (drawn by indicatif). They only observe: a run does the same work
//! whether a bar is drawn or not. A bar is drawn only when progress was asked for and stderr
//! is a terminal, or when forced (`--progress always` or `SCHEDLAB_PROGRESS=always`, e.g. to
//! check that drawing changes nothing); and, unless forced, only once the work has taken
//! longer than half a second, so that short runs print nothing.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle, TermLike};
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

static FORCED: AtomicBool = AtomicBool::new(false);

/// Draws progress even when stderr is not a terminal (`--progress always`).
pub fn force(on: bool) {
    FORCED.store(on, Ordering::Relaxed);
}

fn forced() -> bool {
    FORCED.load(Ordering::Relaxed)
        || std::env::var_os("SCHEDLAB_PROGRESS").is_some_and(|v| v == "always")
}

/// Whether progress may be drawn on stderr: asked for, and stderr is a terminal (or forced).
pub fn wanted(asked: bool) -> bool {
    asked && (std::io::stderr().is_terminal() || forced())
}

/// stderr as indicatif's terminal, for forced drawing into a pipe or file (indicatif's own
/// stderr target hides itself there). 80 columns; plain ANSI cursor movements.
#[derive(Debug)]
struct Stderr;

impl TermLike for Stderr {
    fn width(&self) -> u16 {
        80
    }
    fn move_cursor_up(&self, n: usize) -> std::io::Result<()> {
        if n > 0 {
            write!(std::io::stderr(), "\x1b[{n}A")?;
        }
        Ok(())
    }
    fn move_cursor_down(&self, n: usize) -> std::io::Result<()> {
        if n > 0 {
            write!(std::io::stderr(), "\x1b[{n}B")?;
        }
        Ok(())
    }
    fn move_cursor_right(&self, n: usize) -> std::io::Result<()> {
        if n > 0 {
            write!(std::io::stderr(), "\x1b[{n}C")?;
        }
        Ok(())
    }
    fn move_cursor_left(&self, n: usize) -> std::io::Result<()> {
        if n > 0 {
            write!(std::io::stderr(), "\x1b[{n}D")?;
        }
        Ok(())
    }
    fn write_line(&self, s: &str) -> std::io::Result<()> {
        writeln!(std::io::stderr(), "{s}")
    }
    fn write_str(&self, s: &str) -> std::io::Result<()> {
        write!(std::io::stderr(), "{s}")
    }
    fn clear_line(&self) -> std::io::Result<()> {
        write!(std::io::stderr(), "\r\x1b[2K")
    }
    fn flush(&self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// A bar over `len` units that appears after half a second (immediately when forced).
pub struct Bar {
    len: u64,
    template: &'static str,
    prefix: String,
    start: Instant,
    forced: bool,
    wanted: bool,
    bar: Option<ProgressBar>,
}

impl Bar {
    /// `template` is an indicatif template (`{bar}`, `{percent}`, `{pos}`, `{len}`, `{msg}`,
    /// `{prefix}`).
    pub fn new(asked: bool, len: u64, template: &'static str, prefix: &str) -> Bar {
        Bar {
            len: len.max(1),
            template,
            prefix: prefix.to_string(),
            start: Instant::now(),
            forced: forced(),
            wanted: wanted(asked),
            bar: None,
        }
    }

    fn get(&mut self) -> Option<&ProgressBar> {
        if !self.wanted {
            return None;
        }
        if self.bar.is_none() {
            if !self.forced && self.start.elapsed() < Duration::from_millis(500) {
                return None;
            }
            let target = if self.forced && !std::io::stderr().is_terminal() {
                ProgressDrawTarget::term_like(Box::new(Stderr))
            } else {
                ProgressDrawTarget::stderr()
            };
            let b = ProgressBar::with_draw_target(Some(self.len), target);
            let style = ProgressStyle::with_template(self.template)
                .expect("progress template is valid")
                .progress_chars("#> ");
            b.set_style(style);
            b.set_prefix(self.prefix.clone());
            self.bar = Some(b);
        }
        self.bar.as_ref()
    }

    /// Sets the position (clamped to the length) and the message.
    pub fn set(&mut self, pos: u64, msg: impl FnOnce() -> String) {
        let len = self.len;
        if let Some(b) = self.get() {
            b.set_position(pos.min(len));
            b.set_message(msg());
        }
    }

    /// Draws the end state (100 %) and leaves the bar on its line, if it was drawn.
    pub fn finish(mut self, msg: impl FnOnce() -> String) {
        let len = self.len;
        if let Some(b) = self.bar.take() {
            b.set_position(len);
            b.finish_with_message(msg());
        }
    }
}
