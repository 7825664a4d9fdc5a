//! Helpers shared by the CLI integration tests: the built binary run from the repository root
//! (so that `examples/...` paths resolve), and per-test temporary file names.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_schedlab"));
    c.current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    c
}

pub fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run schedlab")
}

/// A fresh temporary path, distinct per test binary (`CARGO_CRATE_NAME`), process and name.
pub fn tmp(name: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!(
        "schedlab-{}-{}-{name}",
        env!("CARGO_CRATE_NAME"),
        std::process::id()
    ));
    let _ = std::fs::remove_file(&p);
    p
}
