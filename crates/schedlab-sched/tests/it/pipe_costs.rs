//! What a pipe write and read cost per kernel version: f017b0a4951f (v6.15, carried by the
//! v6.18 preset) stops anonymous pipes from updating the inode times, so from it on each
//! operation costs `c_pipe_update_time` (write) or `c_pipe_accessed` (read) less.

use schedlab_engine::Nanos;
use schedlab_sched::ipc::PipeId;
use schedlab_sched::*;

/// Writes one 512-byte packet into `pipe`, then (if `read_back`) reads it back, then exits.
struct Once {
    pipe: PipeId,
    read_back: bool,
    step: u32,
}
impl Program for Once {
    fn next(&mut self, _cx: &mut Ctx<'_>, _last: SysResult) -> Op {
        let (pipe, bytes) = (self.pipe, 512);
        self.step += 1;
        match self.step {
            1 => Op::PipeWrite { pipe, bytes },
            2 if self.read_back => Op::PipeRead { pipe, bytes },
            _ => Op::Exit,
        }
    }
}

/// System time of a task that writes one packet into a pipe and, with `read_back`, reads it
/// back, alone on an ideal machine whose only costs are the pipe's (no switch, exit or jitter).
fn sys_ns(kernel: &str, read_back: bool) -> u64 {
    let cfg = KernelConfig::parse(&format!("{kernel} NO_SIM_JITTER")).unwrap();
    let mut m = MachineDesc::ideal(1, 1000, PreemptModel::Full);
    for c in &mut m.costs {
        c.c_pipe_write = Nanos(350);
        c.c_pipe_read = Nanos(270);
        c.c_pipe_update_time = Some(Nanos(40));
        c.c_pipe_accessed = Some(Nanos(60));
    }
    let mut k = Kernel::new(cfg, m, 1).unwrap();
    k.strict = true;
    let pipe = k.ipc.new_pipe(true, 16, 4096);
    let prog = Once {
        pipe,
        read_back,
        step: 0,
    };
    let t = k.create_task(Box::new(prog), &TaskAttrs::default(), None, false);
    k.start_task(t);
    k.run_until(1_000_000);
    k.tasks[t.index()].stats.sys_ns
}

/// (write, read) system time of one 512-byte packet under `kernel`.
fn write_read(kernel: &str) -> (u64, u64) {
    let w = sys_ns(kernel, false);
    (w, sys_ns(kernel, true) - w)
}

#[test]
fn anonymous_pipes_stop_paying_the_time_updates_from_f017b0a4951f() {
    // v6.12: the whole c_pipe_write 350 / c_pipe_read 270 (times updated);
    // v6.18 carries f017b0a4951f: 350 - 40 = 310 and 270 - 60 = 210.
    assert_eq!(write_read("v6.12"), (350, 270));
    assert_eq!(write_read("v6.18"), (310, 210));
    // the patch alone, on and off
    assert_eq!(write_read("v6.12+f017b0a4951f"), (310, 210));
    assert_eq!(write_read("v6.18 -f017b0a4951f"), (350, 270));
}
