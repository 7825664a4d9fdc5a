#!/usr/bin/env python3
"""Summarises pipe_atime.sh output: per mode, the FIFO - anonymous pipe difference of each
round (the two kinds ran back to back), then the median and the spread (min, max and the
interquartile range) over rounds. Columns: total CPU ns per op, and where the mode has them
the write and read side. Usage: pipe_atime_summary.py RAW..."""
import statistics
import sys
from collections import defaultdict


def quartiles(xs):
    xs = sorted(xs)
    if len(xs) < 4:
        return xs[0], xs[-1]
    q = statistics.quantiles(xs, n=4, method="inclusive")
    return q[0], q[2]


rows = defaultdict(dict)  # (file, session, round, mode) -> kind -> values
session = 0
for path in sys.argv[1:]:
    for line in open(path):
        if line.startswith("#"):
            session += 1
            continue
        f = line.split()
        rnd, mode, kind = f[1], f[2], f[3]
        vals = [float(x) for x in f[5:] if x.replace(".", "", 1).isdigit()]
        if "csw/op" in f:
            vals = vals[:-1]
            csw = float(f[f.index("csw/op") + 1])
        else:
            csw = None
        rows[(path, session, rnd, mode)][kind] = (vals, csw)

by_mode = defaultdict(list)
for (path, s, rnd, mode), kinds in rows.items():
    if "anon" in kinds and "fifo" in kinds:
        (a, ca), (b, cb) = kinds["anon"], kinds["fifo"]
        by_mode[mode].append(([y - x for x, y in zip(a, b)], a, ca, cb, s))

names = ["per op", "write", "read"]
for mode in ["solo", "solo-ext4", "stream2", "stream1", "pp1", "pp2"]:
    d = by_mode.get(mode)
    if not d:
        continue
    print(f"{mode}: {len(d)} rounds")
    for i in range(len(d[0][0])):
        diffs = [x[0][i] for x in d]
        anon = [x[1][i] for x in d]
        lo, hi = quartiles(diffs)
        print(f"  {names[i]:7} fifo-anon median {statistics.median(diffs):7.1f} ns  "
              f"IQR {lo:6.1f} .. {hi:6.1f}  min {min(diffs):7.1f} max {max(diffs):7.1f}   "
              f"(anon median {statistics.median(anon):7.1f} ns)")
    sessions = sorted({x[4] for x in d})
    if len(sessions) > 1:
        per = []
        for s in sessions:
            xs = [x[0] for x in d if x[4] == s]
            per.append("/".join(f"{statistics.median(v[i] for v in xs):.1f}"
                                for i in range(len(xs[0]))))
        print(f"  per-session medians ({'/'.join(names[:len(d[0][0])])}): " + ", ".join(per))
    if d[0][2] is not None:
        print(f"  csw/op anon median {statistics.median(x[2] for x in d):.3f}, "
              f"fifo median {statistics.median(x[3] for x in d):.3f}")
