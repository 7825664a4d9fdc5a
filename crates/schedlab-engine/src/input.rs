//! Reading an input file (rt-app JSON, platform TOML, scenario TOML) with checks: only a
//! regular file (after following symbolic links) of at most [`MAX_INPUT_BYTES`] is read. A
//! FIFO, device (`/dev/zero`), socket or directory is refused before it is opened, so that
//! nothing blocks on a FIFO or reads until memory runs out. Errors are `io::Error`s whose
//! message says what is wrong; the callers name the file.

use std::io::{self, Read};
use std::path::Path;

/// The largest input file read (16 MiB): the largest rt-app or TOML file of the project is a
/// few KiB.
pub const MAX_INPUT_BYTES: u64 = 16 << 20;

/// Reads a whole regular, UTF-8 file of at most [`MAX_INPUT_BYTES`].
pub fn read_input_file(path: &Path) -> io::Result<String> {
    let meta = std::fs::metadata(path)?;
    if meta.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "is a directory",
        ));
    }
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file (a FIFO, device or socket cannot be an input file)",
        ));
    }
    let too_big = || {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "larger than the {} MiB limit for input files",
                MAX_INPUT_BYTES >> 20
            ),
        )
    };
    if meta.len() > MAX_INPUT_BYTES {
        return Err(too_big());
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    std::fs::File::open(path)?
        .take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        // it grew while being read
        return Err(too_big());
    }
    String::from_utf8(bytes)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not valid UTF-8 text"))
}

/// `s` with control characters escaped (`\n` for a newline), so that an error message quoting
/// a key, value or line from user input stays one line (the fuzz campaign found keys, values
/// and workload lines with newlines in them).
pub fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_devices_directories_and_missing_files() {
        let e = read_input_file(Path::new("/dev/zero")).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let e = read_input_file(Path::new("/")).unwrap_err();
        assert!(e.to_string().contains("directory"), "{e}");
        assert!(read_input_file(Path::new("/nonexistent/x.json")).is_err());
    }

    #[test]
    fn reads_a_file_and_refuses_one_over_the_limit() {
        let p = std::env::temp_dir().join(format!("schedlab-input-{}", std::process::id()));
        std::fs::write(&p, "tasks").unwrap();
        assert_eq!(read_input_file(&p).unwrap(), "tasks");
        // one byte over 16 MiB (a sparse file: no disk used)
        let f = std::fs::File::create(&p).unwrap();
        f.set_len(MAX_INPUT_BYTES + 1).unwrap();
        let e = read_input_file(&p).unwrap_err();
        assert!(e.to_string().contains("16 MiB"), "{e}");
        std::fs::remove_file(&p).unwrap();
    }
}
