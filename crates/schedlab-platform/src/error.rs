//! Errors for user input: every variant names the file, line and key (or the spec) at fault.

use schedlab_engine::input::one_line;

/// A platform that could not be found, read, parsed or validated.
#[derive(Debug, thiserror::Error)]
pub enum PlatformError {
    /// `--platform NAME` that is neither a built-in, `smp:N`, nor a path.
    #[error(
        "unknown platform `{}` (built-in: {known}; or `smp:N`, or a path to a .toml file)",
        one_line(name)
    )]
    Unknown { name: String, known: String },

    /// The file could not be read.
    #[error("{file}: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },

    /// TOML syntax error (line and column from the toml crate's span).
    #[error("{file}:{line}:{column}: {}", one_line(message))]
    Syntax {
        file: String,
        line: usize,
        column: usize,
        message: String,
    },

    /// A value that parses as TOML but is not a valid platform description.
    /// Rendered as `platforms/x.toml:12: cpu_class[1].capacity: must be 1..=1024`.
    #[error("{file}:{line}: {}: {}", one_line(key), one_line(message))]
    Invalid {
        file: String,
        line: usize,
        key: String,
        message: String,
    },

    /// A malformed platform spec on the command line (`smp:0`, `smp:x`).
    #[error("platform `{}`: {}", one_line(spec), one_line(message))]
    BadSpec { spec: String, message: String },
}
