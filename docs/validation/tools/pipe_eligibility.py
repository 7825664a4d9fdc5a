#!/usr/bin/env python3
"""Check a live pipe-pair capture (capture-pipe-pair.sh) against the fair class's two-task rules.

The state that decides each wakeup is D = v(writer) - v(reader). It cannot be read from the
trace, but every change of it can: sched_stat_runtime gives each update_curr()'s charge (nice 0:
vruntime += runtime). The rules, as fair.c has them for two nice-0 tasks on one cfs_rq:
  * a task that blocks while eligible (reader: D >= 0; writer: D <= 0) is dequeued with its lag
    and re-placed with it at the wakeup: D is frozen while it sleeps (the other's runtime does
    not count);
  * one that blocks ineligible stays queued (DELAY_DEQUEUE): D keeps moving;
  * the writer's wakeup preempts iff D > 0 after the check's update_curr (the writer is then
    ineligible); the reader's wakeup of the writer preempts iff D < 0.
Starting from "D is anything", the script keeps the set of D values (a union of intervals, each
with its frozen flags) consistent with every observed decision ('N' in the need-resched column
of sched_wakeup), and reports where the set becomes empty: the rules cannot explain the trace
there. It also prints the charged runtimes per ping-pong cycle: a (writer, from its switch-in to
the wakeup), b (writer, from the wakeup to its switch-out) and c (reader).
usage: pipe_eligibility.py TRACE [CPU]
"""
import collections
import re
import statistics
import sys

LINE = re.compile(r'^\s*(\S+)-(\d+)\s+(?:\(\s*[\d-]+\)\s+)?\[(\d+)\]\s+(\S+)\s+([\d.]+):\s+(\w+):\s+(.*)$')
INF = 1e15


def events(path, cpu):
    for line in open(path):
        m = LINE.match(line)
        if not m:
            continue
        _comm, pid, c, flags, ts, ev, rest = m.groups()
        if int(c) != cpu:
            continue
        yield dict(pid=int(pid), flags=flags, ts=float(ts), ev=ev,
                   kv=dict(re.findall(r'(\w+)=(\S+)', rest)))


def merge(sets):
    sets = sorted(s for s in sets if s[0] <= s[1])
    out = []
    for s in sets:
        for i, o in enumerate(out):
            if o[2:] == s[2:] and s[0] <= o[1] and o[0] <= s[1]:
                out[i] = (min(o[0], s[0]), max(o[1], s[1])) + o[2:]
                break
        else:
            out.append(s)
    return out


def main():
    path = sys.argv[1]
    cpu = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    evs = list(events(path, cpu))
    switches = collections.Counter(e['pid'] for e in evs if e['ev'] == 'sched_switch')
    pair = [p for p, _ in switches.most_common(2)]
    n_flag = collections.Counter((e['pid'], 'N' in e['flags'][:2])
                                 for e in evs if e['ev'] == 'sched_wakeup')
    # the writer is the one whose wakeups (pipe was empty) usually preempt
    w = max(pair, key=lambda p: n_flag[(p, True)])
    r = [p for p in pair if p != w][0]
    sets = [(-INF, INF, False, False)]  # (lo, hi, reader frozen, writer frozen)
    fails, decisions = [], collections.Counter()
    acc = collections.Counter()
    a_s, b_s, c_s = [], [], []
    cur, woke = None, False
    for e in evs:
        ev = e['ev']
        if ev == 'sched_stat_runtime':
            p, x = int(e['kv']['pid']), int(e['kv']['runtime'])
            acc[p] += x
            if p == w:
                sets = [(lo + x, hi + x, fr, fw) if not fr else (lo, hi, fr, fw)
                        for lo, hi, fr, fw in sets]
            elif p == r:
                sets = [(lo - x, hi - x, fr, fw) if not fw else (lo, hi, fr, fw)
                        for lo, hi, fr, fw in sets]
        elif ev == 'sched_switch':
            prev, nxt = int(e['kv']['prev_pid']), int(e['kv']['next_pid'])
            if prev in (w, r) and e['kv']['prev_state'].startswith('S'):
                split = []
                for lo, hi, fr, fw in sets:
                    if prev == r:
                        split += [(max(lo, 0), hi, True, fw), (lo, min(hi, -1e-9), False, fw)]
                    else:
                        split += [(lo, min(hi, 0), fr, True), (max(lo, 1e-9), hi, fr, False)]
                sets = merge(split)
            if prev == w and woke and e['kv']['prev_state'] == 'R':
                b_s.append(acc[w])
            if prev == r and e['kv']['prev_state'].startswith('S'):
                c_s.append(acc[r])
            acc[prev] = 0
            cur, woke = nxt, False
        elif ev == 'sched_wakeup':
            p, preempt = int(e['kv']['pid']), 'N' in e['flags'][:2]
            if e['pid'] == w and p == r:
                decisions[('writer wakes reader', preempt)] += 1
                if cur == w:
                    a_s.append(acc[w])
                    acc[w] = 0
                    woke = preempt
                new = [(max(lo, 1e-9), hi, False, fw) if preempt else (lo, min(hi, 0), False, fw)
                       for lo, hi, fr, fw in sets]
            elif e['pid'] == r and p == w:
                decisions[('reader wakes writer', preempt)] += 1
                new = [(lo, min(hi, -1e-9), fr, False) if preempt else (max(lo, 0), hi, fr, False)
                       for lo, hi, fr, fw in sets]
            else:
                continue
            new = merge(new)
            if not new:
                fails.append((e['ts'], sets))
                new = [(-INF, INF, False, False)]
            sets = new
    print(f'writer {w}, reader {r}')
    for k, v in sorted(decisions.items()):
        print(f'  {k[0]}: {"preempts" if k[1] else "no preemption"} {v}')
    total = sum(v for k, v in decisions.items())
    print(f'decisions the rules cannot explain: {len(fails)} of {total}')
    for ts, s in fails[:10]:
        print(f'  at {ts:.6f}: D was in', [(round(lo), round(hi)) for lo, hi, _, _ in s][:3])
    for name, xs in (('a', a_s), ('b', b_s), ('c', c_s)):
        if len(xs) > 10:
            print(f'{name}: {len(xs)} cycles, median {statistics.median(xs) / 1e3:.3f} us, '
                  f'mean {statistics.mean(xs) / 1e3:.3f} us')


if __name__ == '__main__':
    main()
