//! The models reach the kernel only through `Sys`, `Procfs` and the programs' `Ctx` (issue 10
//! item 4): this reads every source file of the crate and fails if code outside its
//! `#[cfg(test)] mod tests` (the last item of each file; clippy's `items_after_test_module`
//! keeps it last) names the `Kernel`, one of its internal fields, or an internal module of
//! the kernel crate. Tests may drive a `Kernel` directly.

use std::path::{Path, PathBuf};

/// What model code must not name. Words are matched whole (`KernelConfig` is another word);
/// the rest as written.
const FORBIDDEN_WORDS: &[&str] = &["Kernel", "SimFeature", "MachineDesc"];
const FORBIDDEN: &[&str] = &[
    ".machine",
    ".cfg.",
    ".se[",
    ".rqs",
    ".cfs[",
    ".tgs[",
    ".ipc.",
    ".costs[",
    "schedlab_sched::core",
    "schedlab_sched::exec",
    "schedlab_sched::fair",
    "schedlab_sched::select",
    "schedlab_sched::balance",
    "schedlab_sched::schedule",
    "schedlab_sched::stats",
    "schedlab_sched::pelt",
    "schedlab_sched::presets",
    "schedlab_sched::features",
];

/// The violations in one file's text: `line: pattern`.
fn violations(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        // code only: drop a `//` comment (doc comments included)
        let code = match line.find("//") {
            Some(p) => &line[..p],
            None => line,
        };
        for p in FORBIDDEN {
            if code.contains(p) {
                out.push(format!("{}: {p}", i + 1));
            }
        }
        for w in FORBIDDEN_WORDS {
            let is_word = |c: char| c.is_alphanumeric() || c == '_';
            let mut from = 0;
            while let Some(p) = code[from..].find(w) {
                let at = from + p;
                let before = code[..at].chars().next_back();
                let after = code[at + w.len()..].chars().next();
                if !before.is_some_and(is_word) && !after.is_some_and(is_word) {
                    out.push(format!("{}: {w}", i + 1));
                }
                from = at + w.len();
            }
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn the_check_finds_what_it_must() {
    let bad = "use schedlab_sched::{Ctx, Kernel};\n\
               fn f(k: &schedlab_sched::Kernel) -> u64 { k.machine.speed[0] }\n\
               // a comment may say Kernel or k.machine.name\n\
               fn g(c: &KernelConfig) {}\n\
               let s = k.se[0].sum_exec_runtime; let j = k.cfg.sim(SimFeature::SIM_JITTER);\n\
               #[cfg(test)]\n\
               mod tests { use schedlab_sched::Kernel; }\n";
    assert_eq!(
        violations(bad),
        vec![
            "1: Kernel",
            "2: .machine",
            "2: Kernel",
            "5: .cfg.",
            "5: .se[",
            "5: SimFeature",
        ]
    );
}

#[test]
fn models_use_only_the_narrow_surface() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    // the five models and the trait are among them
    for f in [
        "stress_ng/model.rs",
        "schbench/model.rs",
        "rtapp/app.rs",
        "workload.rs",
    ] {
        assert!(files.iter().any(|p| p.ends_with(f)), "{f} not found");
    }
    let mut found = Vec::new();
    for f in &files {
        if f.ends_with("surface_tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        for v in violations(&text) {
            found.push(format!("{}:{v}", f.display()));
        }
    }
    assert!(
        found.is_empty(),
        "model code names kernel internals (use Sys/Procfs/Ctx):\n{}",
        found.join("\n")
    );
}
