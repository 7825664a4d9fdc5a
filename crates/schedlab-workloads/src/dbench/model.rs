//! The dbench 4 simulation model (workloads.md §7.2): the process structure of
//! [`super::driver`] with the fileio backend: every loadfile line is one `Op::Fs` (the kernel
//! maps it to its work: syscalls.rs `FsCall`, exec.rs `plan_fs_op`).

use super::driver::{self, Driver, LineIo, Step};
use super::loadfile::{Line, Loadfile, OpKind, NKINDS};
use super::options::{parse, Options};
use super::output::{self, Layout, Report};
use crate::workload::{Env, Metric, Workload, WorkloadError};
use schedlab_sched::sched::TaskId;
use schedlab_sched::{Ctx, FsCall, Op, Procfs, Sys, SysResult};
use std::rc::Rc;

/// Builds the model from the words after `dbench`.
pub fn workload(line: &str, args: &[String]) -> Result<Box<dyn Workload>, WorkloadError> {
    let opts = parse(args).map_err(|e| WorkloadError::option(line, e.to_string()))?;
    let mut warnings = opts.warnings.clone();
    let lf = driver::load("dbench", line, opts.loadfile.as_deref(), &mut warnings)?;
    Ok(Box::new(Dbench::new(opts, lf, warnings)))
}

/// The dbench model.
pub struct Dbench {
    d: Driver,
    warnings: Vec<String>,
}

impl Dbench {
    pub fn new(opts: Options, lf: Loadfile, warnings: Vec<String>) -> Dbench {
        Dbench {
            d: Driver::new(opts, lf, Layout::Dbench),
            warnings,
        }
    }

    /// The report as far as the run got.
    pub fn report(&self) -> Report {
        self.d.report()
    }

    /// The per-second `execute` MB/s values.
    pub fn execute_mbs(&self) -> Vec<f64> {
        self.d.execute_mbs()
    }
}

/// The operation's `Op::Fs` call.
fn fs_call(l: &Line) -> FsCall {
    match l.kind {
        OpKind::NTCreateX => FsCall::Open {
            create: l.create && !l.fail,
        },
        OpKind::Close => FsCall::Close,
        OpKind::Rename => FsCall::Rename,
        OpKind::Unlink => FsCall::Unlink,
        OpKind::Deltree | OpKind::Rmdir => FsCall::Rmdir,
        OpKind::Mkdir => FsCall::Mkdir,
        OpKind::Qpathinfo | OpKind::Qfileinfo | OpKind::Qfsinfo => FsCall::Stat,
        OpKind::Sfileinfo => FsCall::Setattr,
        OpKind::Find => FsCall::Readdir,
        OpKind::WriteX => FsCall::Write,
        // a Sleep line never reaches the file system (FsIo::step)
        OpKind::ReadX | OpKind::Sleep => FsCall::Read,
        OpKind::LockX | OpKind::UnlockX => FsCall::Lock,
        OpKind::Flush => FsCall::Fsync,
    }
}

/// The fileio backend: one `Op::Fs` per line with the operation's CPU cost.
struct FsIo {
    op_cost: Rc<[u64; NKINDS]>,
}

impl LineIo for FsIo {
    fn step(
        &mut self,
        _cx: &mut Ctx<'_>,
        _i: usize,
        line: &Line,
        k: u32,
        _last: SysResult,
    ) -> Step {
        if k > 0 {
            return Step::Done;
        }
        if line.kind == OpKind::Sleep {
            return Step::Op(Op::Sleep(line.size as u64 * 1_000));
        }
        Step::Op(Op::Fs {
            call: fs_call(line),
            file: line.file,
            bytes: self.counted(line) as u32,
            cpu_ns: self.op_cost[line.kind.index()],
        })
    }

    /// fileio counts the bytes asked for (`size`).
    fn counted(&self, line: &Line) -> u64 {
        match line.kind {
            OpKind::ReadX | OpKind::WriteX => line.size as u64,
            _ => 0,
        }
    }
}

impl Workload for Dbench {
    fn program(&self) -> &str {
        "dbench"
    }

    fn max_tasks(&self, _ncpus: usize) -> u64 {
        1 + self.d.opts.clients as u64
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    /// The `Throughput` line and the operation table come when the parent has reaped the
    /// clients after `-t`.
    fn completed(&self) -> Option<bool> {
        Some(self.d.finished())
    }

    fn duration_hint(&self) -> Option<u64> {
        Some(self.d.duration_hint())
    }

    fn setup(&mut self, sys: &mut dyn Sys, env: &Env) -> Result<(), WorkloadError> {
        sys.mount_xfs();
        let mut costs = [0u64; NKINDS];
        for k in OpKind::ALL {
            costs[k.index()] = sys
                .program_cost("dbench", k.cost_key())
                .unwrap_or(k.table_cost_ns());
        }
        let op_cost = Rc::new(costs);
        let attrs = env.placement.attrs("dbench", env.tg);
        self.d.start(
            sys,
            &attrs,
            Rc::new(move |_id| {
                Box::new(FsIo {
                    op_cost: op_cost.clone(),
                }) as Box<dyn LineIo>
            }),
        );
        Ok(())
    }

    fn output(&self, _procfs: &dyn Procfs) -> String {
        output::render(&self.report())
    }

    fn metrics(&self, _procfs: &dyn Procfs) -> Vec<Metric> {
        self.d.metrics()
    }

    fn tasks(&self) -> Vec<TaskId> {
        self.d.tasks()
    }

    fn series(&self) -> Vec<(String, Vec<(u64, u64)>)> {
        self.d.series()
    }
}

#[cfg(test)]
mod tests {
    use super::super::loadfile;
    use super::*;
    use schedlab_engine::Nanos;
    use schedlab_platform::StorageDevice;
    use schedlab_sched::{Kernel, KernelConfig, MachineDesc, PreemptModel};

    /// One CPU with every kernel cost zero, no idle-exit latency, no jitter; `dev` is the
    /// storage device.
    fn one_cpu(dev: &str) -> Kernel {
        let mut m = MachineDesc::ideal(1, 1000, PreemptModel::Voluntary);
        m.storage = StorageDevice::from_table(dev).unwrap();
        let mut k = Kernel::new(KernelConfig::parse("v6.18 NO_SIM_JITTER").unwrap(), m, 1).unwrap();
        k.strict = true;
        k.check_invariants = true;
        k
    }

    fn run(k: &mut Kernel, args: &str, lf: Loadfile) -> Dbench {
        let words: Vec<String> = args.split_whitespace().map(String::from).collect();
        let mut w = Dbench::new(parse(&words).unwrap(), lf, Vec::new());
        let env = Env {
            placement: Default::default(),
            tg: None,
            index: 0,
            duration_ns: None,
        };
        w.setup(k, &env).unwrap();
        let limit = w.duration_hint().unwrap();
        let stop = k.run_until(limit);
        assert!(stop < limit, "dbench did not finish");
        w
    }

    fn metric(w: &Dbench, k: &Kernel, name: &str) -> f64 {
        w.metrics(k)
            .into_iter()
            .find(|m| m.name == name)
            .unwrap()
            .value
    }

    #[test]
    fn one_client_on_one_cpu_takes_the_hand_summed_time_of_client_tiny() {
        // Every kernel cost zero and a RAM device: a pass costs exactly the loadfile's
        // per-line CPU costs, here W§7.2's table (the model's defaults: smp platforms give no
        // [programs.dbench]), times the counts of client-tiny:
        //   ReadX 946 × 3 = 2 838, NTCreateX 631 × 9 = 5 679, Qpathinfo 561 × 4 = 2 244,
        //   Close 456 × 1.5 = 684, WriteX 315 × 12 = 3 780, Find 210 × 14 = 2 940,
        //   Unlink 123 × 40 = 4 920, Qfsinfo 105 × 2 = 210, Qfileinfo 105 × 1 = 105,
        //   Sfileinfo 49 × 4 = 196, Flush 42 × 15 = 630, Rename 25 × 18 = 450,
        //   LockX 2 × 2 = 4, UnlockX 2 × 2 = 4, Mkdir 1 × 8 = 8          → 24 692 µs
        let mut k = one_cpu("ram");
        let lf = loadfile::builtin("client-tiny").unwrap();
        let w = run(
            &mut k,
            "--warmup 0 -t 5 --run-once --show-execute-time 1",
            lf,
        );
        let sh = w.d.shared.as_ref().unwrap().borrow();
        assert_eq!(sh.pass_ns.len(), 1);
        assert_eq!(sh.pass_ns[0].1, 24_692_000);
        assert_eq!(metric(&w, &k, "loadfile_ms"), 24.692);
        assert_eq!(metric(&w, &k, "passes"), 1.0);
        let out = w.output(&k);
        assert!(
            out.contains("   0 completed in 24 ms at time 24 ms\n"),
            "{out}"
        );
        // every line ran once: the table's counts are the loadfile's
        assert!(out.contains(" ReadX                      946 "), "{out}");
        assert!(out.contains(" Flush                       42 "), "{out}");
        assert_eq!(k.nr_live, 0);
    }

    #[test]
    fn one_client_on_one_cpu_with_an_nvme_fsync_by_hand() {
        // A four-line loadfile; costs zero except c_submit_per_page = 1 µs; enterprise NVMe
        // (Table 1.11-C: write 15 µs, FUA 30 µs; blkdev.rs: + 0.4 µs per KiB beyond 4 KiB).
        //   NTCreateX (create) 9 µs, WriteX 64 KiB 12 µs, Flush 15 µs, Close 1.5 µs  = 37.5
        //   fsync: 16 pages × 1 µs to submit                                        = 16
        //          data write 15 + 60 × 0.4 = 39 µs, then xfs-conv's end-io (free) wakes
        //          the client                                                        = 39
        //          log force: checkpoint 1 holds create 2 + write 1 + size update 1 = 4
        //          items (1 KiB): xfs-cil push (free), FUA write 30 µs, xfs-log wakes = 30
        //   one pass                                                                 122.5 µs
        let text = "NTCreateX \"\\a\" 0x0 2 1 NT_STATUS_OK\n\
                    WriteX 1 0 65536 65536 NT_STATUS_OK\n\
                    Flush 1 NT_STATUS_OK\n\
                    Close 1 NT_STATUS_OK\n";
        let lf = loadfile::parse("four.txt", text).unwrap();
        let mut k = one_cpu("nvme");
        k.costs[0].c_submit_per_page = Nanos(1_000);
        let w = run(&mut k, "--warmup 0 -t 1 1", lf);
        let sh = w.d.shared.as_ref().unwrap().borrow();
        assert!(sh.pass_ns.len() > 8_000, "{}", sh.pass_ns.len());
        assert!(
            sh.pass_ns.iter().all(|p| p.1 == 122_500),
            "{:?}",
            &sh.pass_ns[..4]
        );
        // 64 KiB per pass: 65 536 B × 10⁻⁶ / 122.5 µs = 534.99 MB/s in every second
        let mbs = metric(&w, &k, "throughput_mbs");
        assert!((mbs - 534.99).abs() < 0.5, "{mbs}");
        // the kworkers: the pools of the CPU and the unbound one ran the items
        let comms: Vec<&str> = k.tasks.iter().map(|t| t.comm.as_str()).collect();
        assert!(comms.contains(&"kworker/0:1") && comms.contains(&"kworker/0:1H"));
    }

    #[test]
    fn warm_up_reset_second_is_silent_and_the_stop_alarm_prints_cleanup() {
        // netbench.md §15.4 (the shared dbench.c sig_alarm): --warmup 2 -t 3 prints warmup 1
        // and 2; the alarm at 3 s (the first after the warm-up) resets silently; execute 1,
        // 2, 3 follow; the alarm 4 s after the reset exceeds -t 3: the clients stop and the
        // clean-up line says 4 sec
        let mut k = one_cpu("ram");
        let lf = loadfile::builtin("client-warmup").unwrap();
        let w = run(&mut k, "--warmup 2 -t 3 1", lf);
        let out = w.output(&k);
        let phases: Vec<String> = out
            .lines()
            .filter(|l| !l.starts_with("Throughput"))
            .filter(|l| l.contains(" MB/sec  ") || l.contains("cleanup"))
            .map(|l| {
                let i = l.find(" MB/sec  ").map_or(0, |i| i + 9);
                l[i..].split(" sec").next().unwrap().trim().to_string()
            })
            .collect();
        assert_eq!(
            phases,
            [
                "warmup   1",
                "warmup   2",
                "execute   1",
                "execute   2",
                "execute   3",
                "1  cleanup   4"
            ],
            "{out}"
        );
    }

    #[test]
    fn metrics_names() {
        let mut k = one_cpu("ram");
        let lf = loadfile::builtin("client-warmup").unwrap();
        let w = run(&mut k, "--warmup 0 -t 1 2", lf);
        let names: Vec<String> = w.metrics(&k).into_iter().map(|m| m.name).collect();
        assert_eq!(
            names,
            [
                "throughput_mbs",
                "loadfile_ms",
                "loadfile_stddev_ms",
                "all_clients_ms",
                "all_clients_stddev_ms",
                "passes"
            ]
        );
        // one execute line per second, and the report ends with the Throughput line
        let out = w.output(&k);
        assert_eq!(out.matches(" MB/sec  execute ").count(), 1, "{out}");
        assert!(out.contains("Throughput "), "{out}");
    }
}
