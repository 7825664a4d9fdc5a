//! End-to-end tests of `server-model` on the simulated kernel: the §17.5 N5 vector, one
//! test per arch (requests served, who wakes whom), transports and the option errors that
//! need the machine.

// The whole file is test code (`#[cfg(test)] mod tests;` in mod.rs); the attribute below
// marks where it starts for surface_tests.rs, which reads only the code before it.
#[cfg(test)]
use super::model::ServerModel;
use crate::workload::{parse_placement, Env, Workload};
use schedlab_platform::Platform;
use schedlab_sched::{Kernel, KernelConfig, MachineDesc, PreemptModel, TraceSink};
use schedlab_trace::{TraceEvent, TraceRecord};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

fn kernel_on(spec: &str, m: MachineDesc) -> Kernel {
    let mut k = Kernel::new(KernelConfig::parse(spec).unwrap(), m, 1).unwrap();
    k.strict = true;
    k.check_invariants = true;
    k
}

/// One CPU with the x86 server costs (xeon-2s-64's CPU 0: Table 1.11-D's x86 column, HZ 250),
/// no idle-exit latency.
fn xeon1(spec: &str) -> Kernel {
    let p = Platform::builtin("xeon-2s-64").unwrap();
    let x = MachineDesc::from_platform(&p);
    let mut m = MachineDesc::ideal(1, x.hz, PreemptModel::Voluntary);
    m.costs = vec![x.costs[0].clone()];
    kernel_on(spec, m)
}

#[allow(dead_code)]
fn ideal(spec: &str, ncpus: usize) -> Kernel {
    kernel_on(spec, MachineDesc::ideal(ncpus, 1000, PreemptModel::Full))
}

/// Sets the line up on `k` and runs it for its runtime plus the start-up margin.
fn run(k: &mut Kernel, line: &str) -> ServerModel {
    let (placement, words) = parse_placement(line).unwrap();
    assert_eq!(words[0], "server-model");
    let mut w = ServerModel::new(line, &words[1..]).unwrap();
    let env = Env {
        placement,
        tg: None,
        index: 0,
        duration_ns: None,
    };
    w.setup(k, &env).unwrap();
    let hint = w.duration_hint().unwrap();
    k.run_until(hint);
    w
}

fn requests(w: &ServerModel) -> u64 {
    w.client_stats().iter().map(|c| c.0).sum()
}

const N5: &str = "taskset -c 0 chrt -b 0 server-model --arch epoll_shared --workers 1 \
                  --clients 1 --service const:10us --req-size 1 --rsp-size 1";

/// §17.5 N5 on the x86 server costs (xeon-2s-64), jitter off: one request is
/// client 4.95 (c_tcp_send 2.0 + c_net_rx_tcp 1.4 + c_ep_poll_callback 0.15 + c_ttwu 0.35 +
/// blocking receive 0.75 + 0.30) + worker 15.89 (blocked epoll_wait 0.45 + 0.30 + 0.04,
/// receive 0.75, service 10, send 2.0 + 1.4 + c_ttwu 0.35, re-arm 0.6) + two switches 2.6
/// = 23.44 µs ⇒ 10⁹ / 23 440 = 42 662 requests per second, each 23.44 µs long.
///
/// The simulated CPU also takes its scheduler tick (HZ 250, `c_tick` 1.0 µs), which the
/// vector leaves out: 250 µs per second, so one busy second holds
/// (10⁹ − 250 000) / 23 440 = 42 651.5 requests.
#[test]
fn n5_epoll_shared_one_cpu() {
    let mut k1 = xeon1("v6.18 NO_SIM_JITTER");
    let w1 = run(&mut k1, &format!("{N5} --runtime 500ms"));
    let mut k2 = xeon1("v6.18 NO_SIM_JITTER");
    let w2 = run(&mut k2, &format!("{N5} --runtime 1"));
    let (n1, n2) = (requests(&w1), requests(&w2));
    // The start-up is the same in both runs, so the second half second alone holds
    // (0.5 × 10⁹ − 125 ticks × 1 000) / 23 440 = 21 325.8 requests: 21 325 or 21 326
    // depending on the phase. Without the tick it would be 21 331.
    assert!((21_325..=21_326).contains(&(n2 - n1)), "{n1} {n2}");
    // every latency is 23.44 µs, recorded as 23 (whole µs, truncated); a request that
    // takes a tick is 24.44 µs
    let out = w2.output(&k2);
    assert!(out.contains("\t  50.0th: 23         ("), "{out}");
    assert!(out.contains("\t* 99.0th: 23         ("), "{out}");
    assert!(out.contains("min=23, max="), "{out}");
    // Wake-up latency, from the client's note before its send to the worker's return from
    // epoll_wait: send 2.0 + receive processing 1.4 + ep_poll_callback 0.15 + c_ttwu 0.35
    // (the client's blocking receive is charged when it returns), switch 1.3, then the
    // worker's c_sk_wait 0.30 + c_epoll_wait 0.45 + c_epoll_event 0.04 = 5.99 µs → 5.
    assert!(
        out.contains("Wakeup Latencies percentiles (usec) runtime 1 (s)"),
        "{out}"
    );
    let wake = &out[out.find("Wakeup").unwrap()..];
    assert!(wake.contains("\t  50.0th: 5          ("), "{out}");
    assert!(wake.contains("\t* 99.0th: 5          ("), "{out}");
    // the rate over the run: n2 requests in 1 s
    let line = format!("requests: {n2} total, {n2}.00 req/s\n");
    assert!(out.contains(&line), "{out}");
}

/// `n` CPUs with the x86 server costs.
fn xeon_n(spec: &str, n: usize) -> Kernel {
    let p = Platform::builtin("xeon-2s-64").unwrap();
    let x = MachineDesc::from_platform(&p);
    let mut m = MachineDesc::ideal(n, x.hz, PreemptModel::Voluntary);
    m.costs = vec![x.costs[0].clone(); n];
    kernel_on(spec, m)
}

/// Who woke whom: (waker comm, wakee comm, wakee pid) of every `sched_waking`.
#[derive(Default)]
struct Wakes(Vec<(String, String, i32)>);

struct Sink(Rc<RefCell<Wakes>>);

impl TraceSink for Sink {
    fn record(&mut self, r: &TraceRecord<&str>) {
        if let TraceEvent::SchedWaking { comm, pid, .. } = &r.event {
            self.0
                .borrow_mut()
                .0
                .push((r.comm.to_string(), comm.to_string(), *pid));
        }
    }
}

fn traced(k: &mut Kernel) -> Rc<RefCell<Wakes>> {
    let w = Rc::new(RefCell::new(Wakes::default()));
    k.set_trace(Box::new(Sink(w.clone())));
    w
}

/// The wakers of the workers' wake-ups, with their counts.
fn wakers_of(w: &Wakes, wakee: &str) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for (waker, woken, _) in &w.0 {
        if woken == wakee {
            *m.entry(waker.clone()).or_insert(0) += 1;
        }
    }
    m
}

/// Every client completed requests, every served client is served by exactly one worker
/// (the connection's binding), and every client is served.
fn check_binding(w: &ServerModel, m: usize) -> Vec<Vec<usize>> {
    for (i, c) in w.client_stats().iter().enumerate() {
        assert!(c.0 > 10, "client {i} completed {}", c.0);
    }
    let sets: Vec<Vec<usize>> = w.worker_stats().into_iter().map(|x| x.1).collect();
    let mut seen = vec![0; m];
    for s in &sets {
        for &i in s {
            seen[i] += 1;
        }
    }
    assert_eq!(seen, vec![1; m], "{sets:?}");
    sets
}

/// per_conn: one worker per connection, cloned by the acceptor; each worker blocks in its
/// receive and is woken by its own client's send (the softirq runs in the client's context,
/// so `current` at the wake-up is the client); the acceptor is woken by the connects.
#[test]
fn per_conn_one_worker_per_connection() {
    let mut k = xeon_n("v6.18 NO_SIM_JITTER", 2);
    let tr = traced(&mut k);
    let w = run(
        &mut k,
        "server-model --arch per_conn --clients 4 --runtime 20ms",
    );
    let sets = check_binding(&w, 4);
    assert_eq!(sets.len(), 4);
    assert!(sets.iter().all(|s| s.len() == 1), "{sets:?}");
    assert!(w
        .output(&k)
        .starts_with("server-model: arch=per_conn transport=tcp workers=4 "));
    let t = tr.borrow();
    let wk = wakers_of(&t, "worker");
    assert_eq!(wk.keys().collect::<Vec<_>>(), ["client"], "{wk:?}");
    let acc = wakers_of(&t, "acceptor");
    assert!(acc.keys().all(|k| k == "client"), "{acc:?}");
}

/// epoll_per_worker with EPOLLEXCLUSIVE on the shared listener: each connection stays with
/// the worker that accepted it; the workers' wake-ups come from the clients' sends (the
/// clients think 200 µs, so the workers go idle between requests).
#[test]
fn epoll_per_worker_exclusive_keeps_connections() {
    let mut k = xeon_n("v6.18 NO_SIM_JITTER", 2);
    let tr = traced(&mut k);
    let w = run(
        &mut k,
        "server-model --arch epoll_per_worker --workers 2 --clients 4 --think const:200us \
         --runtime 20ms",
    );
    let sets = check_binding(&w, 4);
    assert_eq!(sets.len(), 2);
    let wk = wakers_of(&tr.borrow(), "worker");
    assert_eq!(wk.keys().collect::<Vec<_>>(), ["client"], "{wk:?}");
}

/// epoll_per_worker with SO_REUSEPORT: worker j owns listener j, and the connect of a
/// client lands on the listener the group's hash of its port picks — so client i is
/// served by exactly that worker.
#[test]
fn reuseport_binds_by_the_hash_of_the_client_port() {
    let mut k = xeon_n("v6.18 NO_SIM_JITTER", 2);
    let w = run(
        &mut k,
        "server-model --arch epoll_per_worker --accept reuseport --workers 4 --clients 12 \
         --runtime 20ms",
    );
    let sets = check_binding(&w, 12);
    let (binding, listeners) = w.tcp_binding();
    assert_eq!((binding.len(), listeners.len()), (12, 4));
    let mut used = std::collections::BTreeSet::new();
    for (srv, client) in binding {
        let cli = k.net.tcp[srv.index()].peer;
        let port = k.net.tcp[cli.index()].port;
        let l = k.net.reuseport_select(listeners[0], port);
        let j = listeners.iter().position(|&x| x == l).unwrap();
        used.insert(j);
        assert!(
            sets[j].contains(&client),
            "client {client} port {port}: {sets:?}"
        );
    }
    // 12 ports over 4 listeners: the hash spreads them over more than one worker
    assert!(used.len() > 1, "{used:?}");
}

/// epoll_shared: W workers in epoll_wait on one instance wait LIFO, so with one client the
/// most recently idle worker — the one that just served and re-armed — takes every request
/// after the first; the other stays asleep.
#[test]
fn epoll_shared_wakes_the_most_recently_idle_worker() {
    let mut k = xeon_n("v6.18 NO_SIM_JITTER", 2);
    let tr = traced(&mut k);
    let w = run(
        &mut k,
        "server-model --arch epoll_shared --workers 2 --clients 1 --runtime 20ms",
    );
    let served: Vec<u64> = w.worker_stats().iter().map(|x| x.0).collect();
    let total = requests(&w);
    assert!(total > 100, "{total}");
    let max = *served.iter().max().unwrap();
    assert!(max + 1 >= total, "{served:?} of {total}");
    let wk = wakers_of(&tr.borrow(), "worker");
    assert!(
        wk.get("client").copied().unwrap_or(0) as u64 >= total - 1,
        "{wk:?}"
    );
}

/// dispatcher: connections go round robin (4 clients over 2 workers: two each); the
/// hand-off wakes a worker from the dispatcher (the notify pipe), the requests from the
/// clients (the clients think 200 µs, so the workers go idle between requests).
#[test]
fn dispatcher_round_robin_and_hand_off_wakes() {
    for notify in ["pipe", "eventfd"] {
        let mut k = xeon_n("v6.18 NO_SIM_JITTER", 2);
        let tr = traced(&mut k);
        let w = run(
            &mut k,
            &format!(
                "server-model --arch dispatcher --workers 2 --clients 4 --notify {notify} \
                 --think const:200us --runtime 20ms"
            ),
        );
        let sets = check_binding(&w, 4);
        assert_eq!(
            sets.iter().map(Vec::len).collect::<Vec<_>>(),
            [2, 2],
            "{notify}"
        );
        let wk = wakers_of(&tr.borrow(), "worker");
        assert!(wk.contains_key("dispatcher"), "{notify}: {wk:?}");
        assert!(wk.contains_key("client"), "{notify}: {wk:?}");
        assert!(
            wk.keys().all(|k| k == "client" || k == "dispatcher"),
            "{wk:?}"
        );
    }
}

/// UDP and AF_UNIX with every arch that has no accept: every client is served, by one
/// worker each where the arch binds connections.
#[test]
fn udp_and_unix_transports() {
    for transport in ["udp", "unix"] {
        for arch in ["per_conn", "epoll_per_worker", "epoll_shared"] {
            let mut k = xeon_n("v6.18 NO_SIM_JITTER", 2);
            let workers = if arch == "per_conn" {
                ""
            } else {
                "--workers 2"
            };
            let line = format!(
                "server-model --transport {transport} --arch {arch} {workers} --clients 4 \
                 --runtime 10ms"
            );
            let w = run(&mut k, &line);
            if arch == "epoll_shared" {
                // no binding: any idle worker takes the next request
                for (i, c) in w.client_stats().iter().enumerate() {
                    assert!(c.0 > 10, "{line}: client {i} completed {}", c.0);
                }
                continue;
            }
            let sets = check_binding(&w, 4);
            if arch == "epoll_per_worker" {
                // client i → worker i mod 2
                assert_eq!(sets, [vec![0, 2], vec![1, 3]], "{line}");
            }
        }
    }
}

/// conn per_request: a connect, an accept and two closes per request. On one CPU with
/// SCHED_BATCH (no wake-up preemption) each request is c_tcp_connect 15 + the request and
/// response of 100 / 1000 bytes + c_accept 4 + 2 × c_tcp_close 6 and more switches: well
/// above the persistent request's time, and every request is a new connection.
#[test]
fn per_request_connections() {
    for arch in ["per_conn", "epoll_per_worker", "epoll_shared", "dispatcher"] {
        let line = |conn: &str| {
            format!(
                "taskset -c 0 chrt -b 0 server-model --arch {arch} --workers 1 --clients 1 \
                 --conn {conn} --runtime 10ms"
            )
        };
        let mut k = xeon1("v6.18 NO_SIM_JITTER");
        let w = run(&mut k, &line("per_request"));
        let per_request = requests(&w);
        // per_conn keeps its workers in a thread cache: one client needs one worker (two
        // if a connect comes before the last worker parked), not one per request
        assert!(
            w.worker_stats().len() <= 2,
            "{arch}: {}",
            w.worker_stats().len()
        );
        let mut k = xeon1("v6.18 NO_SIM_JITTER");
        let persistent = requests(&run(&mut k, &line("persistent")));
        // the connection costs alone are 15 + 4 + 12 = 31 µs per request
        assert!(per_request > 50, "{arch}: {per_request}");
        assert!(
            per_request * 10 < persistent * 6,
            "{arch}: {per_request} vs {persistent}"
        );
    }
}

/// The service lock: with 4 workers on 4 CPUs and the whole service (10 µs) under one
/// mutex, the service is serialised: at most 10⁹ / 10 000 = 100 000 requests per second,
/// and contention shows as futex wake-ups of one worker by another.
#[test]
fn service_lock_serialises() {
    let mut k = xeon_n("v6.18 NO_SIM_JITTER", 4);
    let tr = traced(&mut k);
    let w = run(
        &mut k,
        "server-model --arch epoll_per_worker --workers 4 --clients 8 --service-lock 10us \
         --runtime 20ms",
    );
    let n = requests(&w);
    // 20 ms of 10 µs sections: at most 2 000
    assert!(n <= 2_000 && n > 1_000, "{n}");
    let wk = wakers_of(&tr.borrow(), "worker");
    assert!(wk.get("worker").copied().unwrap_or(0) > 10, "{wk:?}");
}

/// Open loop: Poisson arrivals at 2 000 requests/s per client, far below saturation, so
/// the completed requests are the arrivals: 4 clients × 2 000/s × 0.1 s = 800 expected
/// (σ = √800 ≈ 28; the window is ±3.5 σ).
#[test]
fn open_loop_completes_the_arrivals() {
    let mut k = xeon_n("v6.18 NO_SIM_JITTER", 2);
    let w = run(
        &mut k,
        "server-model --arch epoll_per_worker --workers 2 --clients 4 --mode open:2000 \
         --runtime 100ms",
    );
    let n = requests(&w);
    assert!((700..=900).contains(&n), "{n}");
}

/// Think time: one client sleeping 1 ms between requests (SCHED_OTHER: the hrtimer fires
/// 50 µs late, the slack, on an otherwise quiet CPU) plus about 30 µs of request: ≈ 1.08 ms
/// per request, so 100 ms hold about 92; busy thinking has no slack: ≈ 97.
#[test]
fn think_time_sleep_and_busy() {
    let mut k = xeon_n("v6.18 NO_SIM_JITTER", 2);
    let sleep = requests(&run(
        &mut k,
        "server-model --arch per_conn --clients 1 --think const:1ms --runtime 100ms",
    ));
    let mut k = xeon_n("v6.18 NO_SIM_JITTER", 2);
    let busy = requests(&run(
        &mut k,
        "server-model --arch per_conn --clients 1 --think const:1ms --think-mode busy \
         --runtime 100ms",
    ));
    assert!((88..=95).contains(&sleep), "{sleep}");
    assert!((94..=99).contains(&busy), "{busy}");
    assert!(busy > sleep);
}

/// Same line, same seed: the same bytes out; the service distributions draw from the
/// workers' random streams.
#[test]
fn deterministic_with_random_service() {
    let line = "server-model --arch epoll_shared --workers 2 --clients 4 \
                --service lognormal:3us,0.5 --think exp:50us --runtime 10ms";
    let out = |seed_spec: &str| {
        let mut k = xeon_n(seed_spec, 2);
        let w = run(&mut k, line);
        w.output(&k)
    };
    let a = out("v6.18");
    assert_eq!(a, out("v6.18"));
    assert!(a.contains("requests: "), "{a}");
}

/// Bad lines stop at parse time with one line naming the option and the value (the CLI
/// exits 2 on a `WorkloadError`); a line that needs more tasks than pid_max allows stops at
/// set-up, naming the counts.
#[test]
fn errors_through_the_workload_line() {
    for (line, must) in [
        ("server-model --arch threads", "'threads'"),
        ("server-model --service exp:-1us", "--service"),
        (
            "taskset -c 0 server-model --transport udp --conn per_request",
            "per_request",
        ),
        ("server-model --mode open:0", "'0'"),
    ] {
        let e = crate::workload::parse_workload(line).err().unwrap();
        assert!(
            matches!(e, crate::workload::WorkloadError::Option { .. }),
            "{e:?}"
        );
        let msg = e.to_string();
        assert!(msg.contains(must) && msg.contains(line), "{msg}");
    }
    let mut k = xeon_n("v6.18", 2);
    let (placement, words) = parse_placement("server-model --clients 40000").unwrap();
    let mut w = ServerModel::new("server-model --clients 40000", &words[1..]).unwrap();
    let env = Env {
        placement,
        tg: None,
        index: 0,
        duration_ns: None,
    };
    let e = w.setup(&mut k, &env).err().unwrap().to_string();
    assert!(
        e.contains("--clients 40000") && e.contains("pid_max"),
        "{e}"
    );
}

/// epoll_per_worker with the listener in every instance without EPOLLEXCLUSIVE: every
/// connect wakes all idle workers (the herd), and the losers' accept finds the queue empty;
/// with EPOLLEXCLUSIVE a connect wakes only the first instance with a sleeper. With two
/// clients over four workers, the herd wakes all four workers, the exclusive links at most
/// the two that get a connection. Connections end up with one worker each either way.
#[test]
fn epoll_accept_herd_and_exclusive() {
    for (accept, most) in [("epoll", 4), ("epoll_exclusive", 2)] {
        let mut k = xeon_n("v6.18 NO_SIM_JITTER", 4);
        let tr = traced(&mut k);
        let w = run(
            &mut k,
            &format!(
                "server-model --arch epoll_per_worker --accept {accept} --workers 4 \
                 --clients 2 --runtime 10ms"
            ),
        );
        check_binding(&w, 2);
        // workers that never slept or served add nothing to the merged histogram (schbench's
        // combine would take their empty min of 0): every wake-up takes at least the send
        let out = w.output(&k);
        assert!(!out.contains("min=0,"), "{out}");
        let t = tr.borrow();
        let woken: std::collections::BTreeSet<i32> =
            t.0.iter()
                .filter(|(a, b, _)| a == "client" && b == "worker")
                .map(|x| x.2)
                .collect();
        if accept == "epoll" {
            assert_eq!(woken.len(), most, "{accept}: {woken:?}");
        } else {
            assert!(woken.len() <= most, "{accept}: {woken:?}");
        }
    }
}

/// `--worker-mm process`: the workers are processes of their own (nginx), threads
/// otherwise; the clients are threads of one client process.
#[test]
fn worker_mm_thread_or_process() {
    for (mm, distinct) in [("thread", 1), ("process", 3)] {
        let mut k = xeon_n("v6.18 NO_SIM_JITTER", 2);
        let w = run(
            &mut k,
            &format!("server-model --workers 3 --clients 2 --worker-mm {mm} --runtime 5ms"),
        );
        let tg = |t: schedlab_sched::sched::TaskId| k.tasks[t.index()].tgid;
        let workers: std::collections::BTreeSet<i32> =
            w.worker_stats().iter().map(|x| tg(x.2.unwrap())).collect();
        assert_eq!(workers.len(), distinct, "{mm}");
        let clients: std::collections::BTreeSet<i32> =
            w.client_stats().iter().map(|x| tg(x.1.unwrap())).collect();
        assert_eq!(clients.len(), 1, "{mm}");
        assert!(clients.is_disjoint(&workers), "{mm}");
    }
}

/// Per-side placement (§17.2's last row): the workers (the whole server process) on CPU 1
/// as SCHED_BATCH, the clients on CPU 0 at nice 5; a CPU the machine lacks is refused at
/// set-up.
#[test]
fn per_side_policy_and_cpus() {
    let mut k = xeon_n("v6.18 NO_SIM_JITTER", 2);
    let w = run(
        &mut k,
        "server-model --workers 2 --clients 2 --worker-cpus 1 --worker-policy batch \
         --client-cpus 0 --client-nice 5 --runtime 5ms",
    );
    assert!(requests(&w) > 50);
    for (_, _, t) in w.worker_stats() {
        let t = &k.tasks[t.unwrap().index()];
        assert_eq!((t.cpu, t.policy), (1, schedlab_sched::sched::Policy::Batch));
    }
    for (_, t) in w.client_stats() {
        let t = &k.tasks[t.unwrap().index()];
        assert_eq!((t.cpu, t.nice), (0, 5));
    }
    let line = "server-model --worker-cpus 7";
    let (placement, words) = parse_placement(line).unwrap();
    let mut w = ServerModel::new(line, &words[1..]).unwrap();
    let env = Env {
        placement,
        tg: None,
        index: 0,
        duration_ns: None,
    };
    let e = w.setup(&mut k, &env).err().unwrap().to_string();
    assert!(e.contains("--worker-cpus") && e.contains("CPU 7"), "{e}");
}

/// §17.3: think times of 40 ms or more add one delayed-ACK expiry per request (the
/// client's ACK of a response has nothing to ride on until its next request, 50 ms later).
/// A 50 ms think over 0.3 s: requests end at ≈ 50, 100, 150, 200, 250 ms (the next would end
/// after the runtime): 5, each followed by an expiry. A 1 ms think: only the last response's
/// ACK expires, after the client stopped.
#[test]
fn long_think_times_add_delayed_acks() {
    let line = |think: &str| {
        format!("server-model --arch per_conn --clients 1 --think const:{think} --runtime 300ms")
    };
    let mut k = xeon_n("v6.18 NO_SIM_JITTER", 2);
    let w = run(&mut k, &line("50ms"));
    let n = requests(&w);
    assert_eq!(n, 5, "{n}");
    assert!(
        k.net.stats.delack_expiries >= n,
        "{}",
        k.net.stats.delack_expiries
    );
    let mut k = xeon_n("v6.18 NO_SIM_JITTER", 2);
    run(&mut k, &line("1ms"));
    assert_eq!(k.net.stats.delack_expiries, 1);
}

/// The example configurations of §17.5 run and serve requests (short runs).
#[test]
fn section_17_5_examples() {
    for line in [
        // nginx-like keep-alive
        "server-model --arch epoll_per_worker --worker-mm process --accept epoll_exclusive \
         --conn persistent --workers 4 --clients 16 --req-size 100 --rsp-size 1000 \
         --service exp:20us --runtime 5ms",
        // memcached-like
        "server-model --arch dispatcher --workers 4 --clients 50 --req-size 40 --rsp-size 100 \
         --service lognormal:3us,0.5 --service-lock 0.5us --runtime 5ms",
        // RPC with think time
        "server-model --arch per_conn --clients 200 --think exp:1ms --service const:50us \
         --runtime 5ms",
        // connection churn
        "server-model --conn per_request --accept reuseport --workers 4 --clients 8 \
         --runtime 5ms",
    ] {
        let mut k = xeon_n("v6.18", 4);
        let w = run(&mut k, line);
        assert!(requests(&w) > 100, "{line}: {}", requests(&w));
        let out = w.output(&k);
        assert_eq!(out.lines().count(), 2 + 2 * 6, "{out}");
    }
}

/// The metrics are the printed figures: N5's one second (see `n5_epoll_shared_one_cpu`).
#[test]
fn metrics_are_the_printed_figures() {
    let mut k = xeon1("v6.18 NO_SIM_JITTER");
    let w = run(&mut k, &format!("{N5} --runtime 100ms"));
    let m: BTreeMap<String, f64> = w
        .metrics(&k)
        .into_iter()
        .map(|m| (m.name, m.value))
        .collect();
    let n = requests(&w) as f64;
    assert_eq!(m["requests_per_s"], n * 10.0);
    assert_eq!((m["request_p50_us"], m["request_p99_us"]), (23.0, 23.0));
    assert_eq!((m["wakeup_p50_us"], m["wakeup_p99_us"]), (5.0, 5.0));
    assert!(m.contains_key("request_p90_us") && m.contains_key("request_p999_us"));
}

/// Per-side cgroups and slices: every server task in /srv with a 3 ms slice, every client
/// in /cli.
#[test]
fn per_side_cgroup_and_slice() {
    let mut k = xeon_n("v6.18 NO_SIM_JITTER", 2);
    let w = run(
        &mut k,
        "server-model --arch dispatcher --workers 2 --clients 2 --worker-cgroup /srv \
         --worker-slice 3ms --client-cgroup /cli --runtime 5ms",
    );
    assert!(requests(&w) > 50);
    for (_, _, t) in w.worker_stats() {
        let t = t.unwrap();
        assert_eq!(k.task_cgroup_path(t), "/srv");
        let se = k.tasks[t.index()].se;
        assert_eq!(k.se[se.index()].slice, 3_000_000);
    }
    for (_, t) in w.client_stats() {
        assert_eq!(k.task_cgroup_path(t.unwrap()), "/cli");
    }
}
