//! The tbench simulation model (netbench.md §15.3).
//!
//! Two process trees: `tbench_srv` with one child per connection, and dbench's parent with N
//! client processes ([`crate::dbench::driver`]: barrier, progress lines, warm-up, time limit,
//! report). Client `i` and server child `i` share a private loopback TCP connection; every
//! loadfile line is one exchange, `do_packets(req, rep)` of `sockio.c`:
//!
//! * client: `run(W_line)`, a clock read (`c_clock`, the operation's start), one `send` of
//!   the request, `recv(4, MSG_WAITALL)` (blocks until the reply arrives),
//!   `recv(rep − 4, MSG_WAITALL | MSG_TRUNC)` (already queued, no copy), a clock read (the
//!   operation's end); `Sleep` lines sleep, `Deltree` has no exchange (latency 0);
//! * server child: `recv(4, MSG_WAITALL)` (blocks for the next request), `recv(req − 4,
//!   MSG_WAITALL)`, `run(W_srv)`, one `send` of the reply; a read of 0 bytes (the client
//!   closed) ends it.
//!
//! Start-up (outside the measured interval, §15.3): the N connections are made at once with
//! `tcp_pair` instead of N `connect`s against `tbench_srv`'s 21-entry accept queue: the model
//! must know which server child holds the other end of a client's connection (the reply size
//! travels inside the request), which the kernel interface does not tell. `tbench_srv` still
//! creates its listener (`listen(sock, 20)`), forks one child per connection (charging
//! `c_accept` each) and then blocks in `accept` for good, as the real one does after the last
//! client connected; each client charges `c_tcp_connect` and makes the 8-byte/8-byte
//! exchange of `nb_setup` before the barrier. Costs: `[programs.tbench]` `w_line` and
//! `w_srv`, else the spec's x86 values 1.5 µs and 0.05 µs (§1.16).

use super::options::{parse, TbenchOptions};
use super::packets::{self, Exchange};
use crate::dbench::driver::{self, Driver, LineIo, Step};
use crate::dbench::loadfile::{Line, Loadfile, OpKind};
use crate::dbench::{render, Layout, Report};
use crate::workload::{Env, Metric, Workload, WorkloadError};
use schedlab_sched::net::{ListenId, RecvFlags, TcpSockId};
use schedlab_sched::sched::TaskId;
use schedlab_sched::{Ctx, Op, Procfs, Program, Spawn, Sys, SysResult, TaskAttrs};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

/// netbench.md §1.16: the x86 value of `W_line` (ns), the default without `[programs.tbench]`.
pub const W_LINE_NS: u64 = 1_500;
/// netbench.md §1.16: the x86 value of `W_srv` (ns).
pub const W_SRV_NS: u64 = 50;
/// `listen(sock, 20)` in tbench_srv.c.
const LISTEN_BACKLOG: u32 = 20;

/// Builds the model from the words after `tbench`.
pub fn workload(line: &str, args: &[String]) -> Result<Box<dyn Workload>, WorkloadError> {
    let opts = parse(args).map_err(|e| WorkloadError::option(line, e.to_string()))?;
    let mut warnings = opts.dbench.warnings.clone();
    let lf = driver::load(
        "tbench",
        line,
        opts.dbench.loadfile.as_deref(),
        &mut warnings,
    )?;
    // tbench_srv.c: a request whose length word + 4 reaches its 70 000-byte buffer ends it
    // ("overflow in server!"); the longest paths are the last client's
    let last = opts.dbench.clients - 1;
    let ex = packets::exchanges(&lf, &opts.dbench.directory, last);
    if let Some((l, e)) = lf
        .lines
        .iter()
        .zip(&ex)
        .find_map(|(l, e)| e.filter(|e| e.req >= SRV_BUF).map(|e| (l, e)))
    {
        return Err(WorkloadError::option(
            line,
            format!(
                "tbench: --loadfile '{}': a {} line makes a request of {} bytes; tbench_srv's \
                 buffer is {SRV_BUF} bytes (it stops with \"overflow in server!\")",
                lf.name,
                l.kind.gormanm_name(),
                e.req
            ),
        ));
    }
    Ok(Box::new(Tbench::new(opts, lf, warnings)))
}

/// `char buf[70000]` of tbench_srv.c's `server()`.
const SRV_BUF: u32 = 70_000;

/// One connection: its two ends, and what the request in flight asks for (the bytes the
/// real request carries: its length and the reply length).
struct Conn {
    client: TcpSockId,
    server: TcpSockId,
    wire: Cell<Exchange>,
}

/// State shared by the programs of the model.
#[derive(Default)]
struct Net {
    nodelay: bool,
    conns: HashMap<u32, Rc<Conn>>,
    /// tbench_srv and its children.
    servers: Vec<TaskId>,
}

impl Net {
    /// Connection `id`, made at its first use by either side.
    fn conn(&mut self, cx: &mut Ctx<'_>, id: u32) -> Rc<Conn> {
        let nodelay = self.nodelay;
        self.conns
            .entry(id)
            .or_insert_with(|| {
                let (client, server) = cx.tcp_pair(nodelay);
                Rc::new(Conn {
                    client,
                    server,
                    wire: Cell::new(Exchange { req: 0, rep: 0 }),
                })
            })
            .clone()
    }
}

/// The tbench model.
pub struct Tbench {
    d: Driver,
    opts: TbenchOptions,
    warnings: Vec<String>,
    net: Rc<RefCell<Net>>,
}

impl Tbench {
    pub fn new(opts: TbenchOptions, lf: Loadfile, warnings: Vec<String>) -> Tbench {
        Tbench {
            d: Driver::new(opts.dbench.clone(), lf, Layout::Gormanm),
            net: Rc::new(RefCell::new(Net {
                nodelay: opts.nodelay,
                ..Default::default()
            })),
            opts,
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

impl Workload for Tbench {
    fn program(&self) -> &str {
        "tbench"
    }

    fn max_tasks(&self, _ncpus: usize) -> u64 {
        2 + 2 * self.opts.dbench.clients as u64
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    fn completed(&self) -> Option<bool> {
        Some(self.d.finished())
    }

    fn duration_hint(&self) -> Option<u64> {
        Some(self.d.duration_hint())
    }

    fn setup(&mut self, sys: &mut dyn Sys, env: &Env) -> Result<(), WorkloadError> {
        let w_line = sys.program_cost("tbench", "w_line").unwrap_or(W_LINE_NS);
        let w_srv = sys.program_cost("tbench", "w_srv").unwrap_or(W_SRV_NS);
        // tbench_srv runs before the clients (mmtests starts it first)
        let srv = Srv {
            net: self.net.clone(),
            clients: self.opts.dbench.clients,
            w_srv,
            listener: None,
            forked: 0,
            accepting: false,
        };
        let t = sys.fork(Box::new(srv), &env.placement.attrs("tbench_srv", env.tg));
        self.net.borrow_mut().servers.push(t);
        sys.wake_up_new_task(t);
        let net = self.net.clone();
        let lf = self.d.lf.clone();
        let dir = self.opts.dbench.directory.clone();
        // the exchanges depend on the client id only through its number of digits
        let by_digits: RefCell<HashMap<usize, Rc<Vec<Option<Exchange>>>>> = Default::default();
        self.d.start(
            sys,
            &env.placement.attrs("tbench", env.tg),
            Rc::new(move |id| {
                let ex = by_digits
                    .borrow_mut()
                    .entry(id.to_string().len())
                    .or_insert_with(|| Rc::new(packets::exchanges(&lf, &dir, id)))
                    .clone();
                Box::new(SockIo {
                    net: net.clone(),
                    id,
                    conn: None,
                    ex,
                    w_line,
                }) as Box<dyn LineIo>
            }),
        );
        Ok(())
    }

    fn output(&self, _procfs: &dyn Procfs) -> String {
        render(&self.report())
    }

    fn metrics(&self, _procfs: &dyn Procfs) -> Vec<Metric> {
        self.d.metrics()
    }

    fn tasks(&self) -> Vec<TaskId> {
        let mut t = self.net.borrow().servers.clone();
        t.extend(self.d.tasks());
        t
    }

    fn series(&self) -> Vec<(String, Vec<(u64, u64)>)> {
        self.d.series()
    }
}

/// A clock read (`gettimeofday`, `c_clock`), with the cost jitter.
fn clock(cx: &mut Ctx<'_>) -> u64 {
    let c = cx.costs().c_clock.0;
    cx.cost_jitter(c)
}

fn recv(sock: TcpSockId, bytes: u32, trunc: bool) -> Op {
    Op::TcpRecv {
        sock,
        bytes,
        flags: RecvFlags {
            waitall: true,
            trunc,
            dontwait: false,
        },
    }
}

/// The client's socket backend (`sockio.c`).
struct SockIo {
    net: Rc<RefCell<Net>>,
    id: u32,
    conn: Option<Rc<Conn>>,
    /// Per loadfile line: its exchange for this client.
    ex: Rc<Vec<Option<Exchange>>>,
    w_line: u64,
}

impl SockIo {
    fn conn(&self) -> &Conn {
        self.conn.as_ref().expect("connected before the first line")
    }

    /// Step `k` of `do_packets(e)`: send, the header, the body; `None` once done.
    fn packets(&self, e: Exchange, k: u32) -> Option<Op> {
        let c = self.conn();
        match k {
            0 => {
                c.wire.set(e);
                Some(Op::TcpSend {
                    sock: c.client,
                    bytes: e.req,
                })
            }
            1 => Some(recv(c.client, 4, false)),
            2 => Some(recv(c.client, e.rep - 4, true)),
            _ => None,
        }
    }
}

impl LineIo for SockIo {
    /// `nb_setup`: connect (`c_tcp_connect`), then one 8-byte/8-byte exchange.
    fn prepare(&mut self, cx: &mut Ctx<'_>, k: u32, _last: SysResult) -> Step {
        if k == 0 {
            let conn = self.net.borrow_mut().conn(cx, self.id);
            self.conn = Some(conn);
            let c = cx.costs().c_tcp_connect.0;
            return Step::Op(Op::Syscall(cx.cost_jitter(c)));
        }
        match self.packets(Exchange { req: 8, rep: 8 }, k - 1) {
            Some(op) => Step::Op(op),
            None => Step::Done,
        }
    }

    fn step(&mut self, cx: &mut Ctx<'_>, i: usize, line: &Line, k: u32, _last: SysResult) -> Step {
        if k == 0 {
            let w = cx.cost_jitter(self.w_line);
            if self.ex[i].is_none() {
                return Step::Op(Op::Run(w));
            }
            // W_line, then the clock read that starts the operation
            let c = clock(cx);
            return Step::Op(Op::Run(w + c));
        }
        let Some(e) = self.ex[i] else {
            // no exchange: Sleep sleeps; Deltree ends at once
            if line.kind == OpKind::Sleep && k == 1 {
                return Step::Op(Op::Sleep(line.size as u64 * 1_000));
            }
            if line.kind == OpKind::Deltree && k == 1 {
                return Step::Clock;
            }
            return Step::Done;
        };
        if k == 1 {
            return Step::Clock;
        }
        if let Some(op) = self.packets(e, k - 2) {
            return Step::Op(op);
        }
        if k == 5 {
            // the clock read that ends the operation
            return Step::Op(Op::Run(clock(cx)));
        }
        Step::Done
    }

    /// The client exits: its socket is closed (the server child reads 0 and exits).
    fn finish(&mut self, _cx: &mut Ctx<'_>, k: u32, _last: SysResult) -> Step {
        match (&self.conn, k) {
            (Some(c), 0) => Step::Op(Op::TcpClose { sock: c.client }),
            _ => Step::Done,
        }
    }

    fn counted(&self, line: &Line) -> u64 {
        packets::counted(line)
    }
}

/// `tbench_srv`: the listener, one child per connection, then `accept` for good.
struct Srv {
    net: Rc<RefCell<Net>>,
    clients: u32,
    w_srv: u64,
    listener: Option<ListenId>,
    forked: u32,
    accepting: bool,
}

impl Program for Srv {
    fn next(&mut self, cx: &mut Ctx<'_>, _last: SysResult) -> Op {
        let listener = match self.listener {
            Some(l) => l,
            None => {
                let l = cx.tcp_listen(LISTEN_BACKLOG, None);
                self.listener = Some(l);
                l
            }
        };
        if self.forked < self.clients {
            if !self.accepting {
                // the accept that returned this connection
                self.accepting = true;
                let c = cx.costs().c_accept.0;
                return Op::Syscall(cx.cost_jitter(c));
            }
            self.accepting = false;
            let id = self.forked;
            self.forked += 1;
            let sock = self.net.borrow_mut().conn(cx, id).server;
            let conn = self.net.borrow().conns[&id].clone();
            return Op::Spawn(Box::new(Spawn {
                program: Box::new(SrvChild {
                    net: self.net.clone(),
                    conn,
                    sock,
                    w_srv: self.w_srv,
                    step: 0,
                    registered: false,
                }),
                thread: false,
                attrs: TaskAttrs::default(),
            }));
        }
        Op::Accept {
            listener,
            nonblock: false,
        }
    }
}

/// One `tbench_srv` child: answers its client's requests until it closes.
struct SrvChild {
    net: Rc<RefCell<Net>>,
    conn: Rc<Conn>,
    sock: TcpSockId,
    w_srv: u64,
    step: u32,
    registered: bool,
}

impl Program for SrvChild {
    fn next(&mut self, cx: &mut Ctx<'_>, last: SysResult) -> Op {
        if !self.registered {
            self.registered = true;
            self.net.borrow_mut().servers.push(cx.task());
        }
        if self.step >= 4 {
            return Op::Exit;
        }
        let e = self.conn.wire.get();
        let step = self.step;
        self.step = (self.step + 1) % 4;
        match step {
            0 => recv(self.sock, 4, false),
            1 => {
                if last == SysResult::Bytes(0) {
                    // the client closed: the read fails, the child exits
                    self.step = 4;
                    return Op::TcpClose { sock: self.sock };
                }
                recv(self.sock, e.req - 4, false)
            }
            2 => Op::Run(cx.cost_jitter(self.w_srv)),
            3 => Op::TcpSend {
                sock: self.sock,
                bytes: e.rep,
            },
            _ => Op::Exit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Placement;
    use schedlab_engine::Nanos;
    use schedlab_sched::sched::Policy;
    use schedlab_sched::{Kernel, KernelConfig, MachineDesc, PreemptModel};

    /// One CPU with every kernel cost zero except the ones `costs` sets, no jitter.
    fn one_cpu(ncpus: usize) -> Kernel {
        let m = MachineDesc::ideal(ncpus, 1000, PreemptModel::Voluntary);
        let mut k = Kernel::new(KernelConfig::parse("v6.18 NO_SIM_JITTER").unwrap(), m, 1).unwrap();
        k.strict = true;
        k.check_invariants = true;
        k
    }

    /// The x86-server costs of netbench.md §15.6 (Table 1.11-D, Table 1.11-A).
    fn x86_costs(k: &mut Kernel) {
        for c in k.costs.iter_mut() {
            c.c_tcp_send = Nanos(2_000);
            c.c_net_rx_tcp = Nanos(1_400);
            c.c_net_rx_ip = Nanos(400);
            c.c_tcp_rcv = Nanos(1_000);
            c.c_tcp_recv = Nanos(750);
            c.c_sk_wait = Nanos(300);
            c.c_ttwu = Nanos(350);
            c.c_copy_per_KB = Nanos(60);
            c.c_ctxsw_process = Nanos(1_300);
            c.c_clock = Nanos(20);
        }
    }

    fn run(k: &mut Kernel, args: &str, lf: Loadfile, placement: Placement) -> Tbench {
        let words: Vec<String> = args.split_whitespace().map(String::from).collect();
        let mut w = Tbench::new(parse(&words).unwrap(), lf, Vec::new());
        let env = Env {
            placement,
            tg: None,
            index: 0,
            duration_ns: None,
        };
        w.setup(k, &env).unwrap();
        let limit = w.duration_hint().unwrap();
        k.run_until(limit);
        // (tbench_srv waits in accept to the end, as the real one does until mmtests kills it)
        assert_eq!(w.completed(), Some(true), "tbench did not finish");
        w
    }

    fn readx_only(lines: usize) -> Loadfile {
        let readx = Line {
            kind: OpKind::ReadX,
            file: 0,
            size: 4096,
            ret_size: 4096,
            count: 0,
            path: [crate::dbench::loadfile::NO_PATH; 2],
            create: false,
            fail: false,
            at_ns: None,
        };
        Loadfile {
            name: "readx.txt".into(),
            lines: vec![readx; lines],
            paths: Vec::new(),
        }
    }

    fn batch() -> Placement {
        Placement {
            policy: Some(Policy::Batch),
            ..Default::default()
        }
    }

    #[test]
    fn reference_vector_15_6_one_readx_exchange() {
        // netbench.md §15.6: one client, one CPU, both SCHED_BATCH, jitter 0, ReadX r = 4096
        // (request 59 B, reply 4 155 B):
        //   client  W_line 1.5 + 2 × c_clock 0.04 + c_tcp_send 2.0 + c_net_rx_tcp 1.4
        //           + c_ttwu 0.35 + tcp_recv(4) 0.75 + c_sk_wait 0.30 + tcp_recv(TRUNC) 0.75
        //           = 7.09 µs
        //   server  0.75 + 0.30 + tcp_recv(55) 0.75 + W_srv 0.05
        //           + c_tcp_send(4 155) 2.0 + 0.06 × 4 155 / 1024 (= 0.243) + 1.4 + 0.35
        //           = 5.843 µs
        //   two process switches 2 × 1.3 = 2.6 µs
        //   → 15.533 µs per operation, 4 096 B / 15.533 µs = 263.7 MB/sec
        // A pass of 1 000 lines is 1 000 operations: 15.533 ms (±1 ns per operation for the
        // copy cost's ns rounding).
        let mut k = one_cpu(1);
        x86_costs(&mut k);
        let w = run(
            &mut k,
            "--warmup 0 -t 5 --run-once --show-execute-time 1",
            readx_only(1_000),
            batch(),
        );
        let sh = w.d.shared.as_ref().unwrap().borrow();
        assert_eq!(sh.pass_ns.len(), 1);
        let pass = sh.pass_ns[0].1 as i64;
        assert!((pass - 15_533_000).abs() <= 1_000, "pass {pass} ns");
        let mbs = 4096.0 * 1_000.0 / pass as f64 * 1e3;
        assert!((mbs - 263.7).abs() < 0.05, "{mbs} MB/s");
        // an operation's latency runs from the clock read after W_line to the clock read
        // after the reply: 15.533 − 1.5 − 0.02 = 14.013 µs, the same for every operation
        let r = w.report();
        let readx = r.ops.iter().find(|o| o.0 == OpKind::ReadX).unwrap().1;
        assert_eq!(readx.count, 1_000);
        assert!((readx.max_ns as i64 - 14_013).abs() <= 1, "{readx:?}");
        let avg = readx.sum_ns as f64 / 1_000.0;
        assert!((avg - 14_013.0).abs() <= 1.0, "{avg}");
        // the table row: " %-22s %7u %9.03f %9.03f", 14.013 µs = 0.014 ms
        let out = w.output(&k);
        assert!(
            out.contains(" ReadX                     1000     0.014     0.014\n"),
            "{out}"
        );
        assert!(
            out.contains("   0 completed in 15 ms at time 15 ms\n"),
            "{out}"
        );
    }

    #[test]
    fn a_second_of_readx_prints_263_7_mb_per_sec() {
        // the same vector through the per-second lines: 10⁶ µs / 15.533 µs = 64 379 ops
        // of 4 096 B each in a second = 263.7 MB/sec (the parent's tick costs nothing here)
        let mut k = one_cpu(1);
        x86_costs(&mut k);
        let w = run(&mut k, "--warmup 0 -t 1 1", readx_only(100), batch());
        let mbs = w.execute_mbs();
        assert_eq!(mbs.len(), 1);
        assert!((mbs[0] - 263.7).abs() < 0.05, "{mbs:?}");
        let out = w.output(&k);
        // the printed column (%7.2f): 263.70 give or take the operation in flight at the tick
        let line = out
            .lines()
            .find(|l| l.contains(" MB/sec  execute   1 sec"))
            .unwrap();
        let col: f64 = line.split_whitespace().nth(2).unwrap().parse().unwrap();
        assert!((col - 263.70).abs() <= 0.02, "{out}");
        assert!(out.starts_with("dbench version 4.00 - Copyright Andrew Tridgell 1999-2004\n\n"));
        // %g of the last execute value: 263.698 here
        let tput = out.split("Throughput ").nth(1).unwrap();
        let tput: f64 = tput.split_whitespace().next().unwrap().parse().unwrap();
        assert!((tput - 263.7).abs() < 0.05, "{out}");
        assert!(
            out.contains(" MB/sec  1 clients  1 procs  max_latency="),
            "{out}"
        );
    }

    #[test]
    fn client_tiny_runs_with_its_server_children_and_is_deterministic() {
        let once = || {
            let mut k = one_cpu(2);
            x86_costs(&mut k);
            let lf = crate::dbench::loadfile::builtin("client-tiny").unwrap();
            let w = run(
                &mut k,
                "--warmup 0 -t 1 --show-execute-time 3",
                lf,
                Placement::default(),
            );
            // tbench_srv, its 3 children, the parent and 3 clients
            let comms: Vec<String> = w
                .tasks()
                .iter()
                .map(|t| k.tasks[t.index()].comm.clone())
                .collect();
            assert_eq!(comms.iter().filter(|c| *c == "tbench_srv").count(), 4);
            assert_eq!(comms.iter().filter(|c| *c == "tbench").count(), 4);
            // the children read 0 after their clients closed and exited: only tbench_srv,
            // blocked in accept, is left
            assert_eq!(k.nr_live, 1);
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
            w.output(&k)
        };
        let a = once();
        assert_eq!(a, once());
        // the table in the gormanm order: NTCreateX last, FIND_FIRST before it
        let find = a.find(" FIND_FIRST ").unwrap();
        let ntc = a.find(" NTCreateX ").unwrap();
        let flush = a.find(" Flush ").unwrap();
        assert!(flush < find && find < ntc, "{a}");
        assert!(a.contains("3 clients  3 procs"), "{a}");
    }

    #[test]
    fn workload_line_errors_name_the_value() {
        let e = crate::parse_workload("tbench 4 10.0.0.1").err().unwrap();
        assert!(matches!(e, WorkloadError::Option { .. }));
        assert!(e.to_string().contains("'10.0.0.1'"), "{e}");
        let e = crate::parse_workload("tbench --loadfile /nonexistent/x.txt 4")
            .err()
            .unwrap();
        assert!(e.to_string().contains("/nonexistent/x.txt"), "{e}");
        // a WriteX of 69 941 B is a 70 000-byte request: tbench_srv's buffer overflows
        let dir = std::env::temp_dir().join(format!("tbench-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let big = dir.join("big.txt");
        let write = |size: u32| {
            let text = format!(
                "NTCreateX \"\\f\" 0x0 1 1 NT_STATUS_OK\nWriteX 1 0 {size} {size} NT_STATUS_OK\n"
            );
            std::fs::write(&big, text).unwrap();
            crate::parse_workload(&format!("tbench --loadfile {} 1", big.display()))
        };
        let e = write(69_941).err().unwrap().to_string();
        assert!(e.contains("WriteX") && e.contains("70000 bytes"), "{e}");
        // one byte less is accepted (59 + 69 940 = 69 999)
        assert!(write(69_940).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
        let (p, w) = crate::parse_workload("chrt --batch 0 tbench -t 10 4 localhost").unwrap();
        assert_eq!(p.policy, Some(Policy::Batch));
        assert_eq!(w.program(), "tbench");
        assert_eq!(w.max_tasks(1), 10);
    }
}
