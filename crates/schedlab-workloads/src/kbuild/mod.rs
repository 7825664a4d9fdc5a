//! The kernel build, `make -jN` (workloads.md §8; docs/model.md W§8): the command line
//! ([`parse`] → [`Options`]), the job graph ([`job_graph`], sized by [`Conf`]), the processes
//! of the build as task programs and the report ([`Report`] → [`render`], bash's `time`).
//!
//! Model — every process is a simulated task using the kernel's own fork (`Op::Spawn`: fork
//! balancing, WF_FORK), exec (`Op::Exec`: `sched_exec`, WF_EXEC), exit (`Op::Exit`, which wakes
//! a parent blocked in `wait()` with WF_SYNC) and wait (`Op::WaitChild`); the workload places
//! nothing itself, and every process inherits make's policy and nice (`chrt --idle 0`,
//! `nice -n 19`):
//!
//! ```text
//! make:   prepare: 5 × { fork sh; exec; run(prepare/5); exit } each waited for
//!         -j1: for each unit: fork sh (job); wait()
//!         -jN, N > 1: pipe(); write(N − 1 one-byte tokens)           (the jobserver)
//!                     for each directory of UNITS_PER_DIR units: a job loop forking a
//!                     sub-make (below)
//! job loop (every make at -jN): slot = implicit if none of its jobs runs, else a token:
//!         pselect(jobserver, SIGCHLD) → readable: read(jobserver, 1, O_NONBLOCK) (EAGAIN:
//!         again); EINTR: wait() reaps the dead child; nothing left to start: wait();
//!         a reaped job's token is written back while the make holds one
//! sub-make: exec; the job loop over its directory's units (fork sh per job); exit
//!         link: 3 × ld (link/3), then modpost, each forked and waited for; exit
//! sh:     exec; run(w_shell/2); fork gcc, wait; [fork objtool, wait]; fork fixdep, wait; exit
//! gcc:    exec; run(w_shell/2);
//!         -pipe:    pipe(); fork cc1; fork as; wait; wait; exit
//!         no -pipe: fork cc1, wait; fork as, wait; exit
//! cc1:    exec; -pipe: chunks × { run(W_cc1/chunks); write(4 KiB) }; else run(W_cc1); exit
//! as:     exec; -pipe: read(4 KiB) and run its share of W_as until all chunks are in;
//!         else run(W_as); exit
//! objtool, fixdep, ld, modpost: exec; run(W); exit
//! ```
//!
//! Sizes (workloads.md §8.2, whose decomposition of P and S is **unverified**): 12 000 units;
//! `W_cc1` lognormal, median 175 ms, σ 0.9, the draws scaled so that the units' cc1 work adds
//! up exactly to `units × median × e^(σ²/2)` (3 148.5 s at full size: the real build does the
//! same work on every run, the seed's draw only spreads it); `W_as` = 8 % of `W_cc1`;
//! `W_objtool` 26 ms (x86 only); `W_fixdep` 2 ms; shell + gcc driver 1 ms per job; serial
//! prepare 25 s, vmlinux link 60 s, modpost 15 s. P = 3 748.4 s and S = 100 s at full size;
//! every size is a per-platform `[programs.make]` key and `--units` (schedlab's own option)
//! shrinks the serial phases in proportion to the units.
//!
//! Model decisions (where the spec is silent; all **unverified**):
//!
//! * **Sub-makes at `-jN` only**, one per directory of [`UNITS_PER_DIR`] units (≈ 1 500
//!   directories for 12 000 units), flat (no sub-make of a sub-make), doing no work of their
//!   own besides their system calls. At `-j1` one make runs every job (Kbuild's sub-makes
//!   would only add a fork + exec per directory there), so `-j1` is unchanged. The N − 1
//!   tokens are written with one `write()`.
//! * **Assembly size**: 1 MiB of assembly per second of cc1 work ([`ASM_BYTES_PER_CC1_SEC`]),
//!   written in 4 KiB pieces evenly spread over cc1's work (≈ 45 chunks for the median
//!   unit); `as` works on each piece as it arrives, in proportion to the bytes.
//! * **One shell per job** runs gcc, objtool and fixdep in turn (Kbuild's recipe lines may use
//!   several shells); the shell and the gcc driver each do half of the 1 ms.
//! * **Serial phases**: prepare as 5 equal serial processes, the vmlinux link as 3 `ld`
//!   passes, modpost as one process, each a fork + exec + run + exit waited for by make;
//!   no parallel module links.
//! * A process gets its final `comm` at fork (the real one changes it at exec).
//! * `-pipe` and objtool are per-platform switches: on for x86 (`arch/x86/Makefile`: "Speed
//!   up the build", `KBUILD_CFLAGS += -pipe`), off on arm64; on by default.
//!
//! Output: bash's `time` report of the whole build (elapsed time from make's start to its
//! exit; user and system time summed over every process of the build); a build that the
//! simulation cut short prints a line saying so instead.

mod model;
mod options;
mod output;

pub use model::{
    job_graph, workload, Conf, Kbuild, Step, Unit, ASM_BYTES_PER_CC1_SEC, AS_RATIO_PPM,
    CHUNK_BYTES, SIGMA_PPM, UNITS_PER_DIR,
};
pub use options::{parse, Options, FULL_UNITS, MAX_JOBS};
pub use output::{bash_time, render, Report};
