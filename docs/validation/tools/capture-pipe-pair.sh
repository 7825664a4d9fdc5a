#!/bin/bash
# Capture one stress-ng pipe pair pinned to CPU 1 of the live kernel with the events that
# show what the fair class charges: sched_switch, sched_waking, sched_wakeup and
# sched_stat_runtime (one event per update_curr() with the runtime it charged).
# usage: capture-pipe-pair.sh OUT [SECONDS_TRACED]   (root; tracefs at /sys/kernel/tracing)
set -eu
T=/sys/kernel/tracing
OUT=$1
DUR=${2:-0.1}
EVENTS="sched_switch sched_waking sched_wakeup sched_stat_runtime sched_migrate_task"
echo 0 > $T/tracing_on
echo > $T/trace
echo local > $T/trace_clock
echo 32768 > $T/buffer_size_kb
for e in $EVENTS; do echo 1 > $T/events/sched/$e/enable; done
echo 1 > $T/options/record-tgid
taskset -c 1 stress-ng --pipe 1 --timeout 3 > /dev/null 2>&1 &
sleep 1.5
echo 1 > $T/tracing_on
sleep "$DUR"
echo 0 > $T/tracing_on
for e in $EVENTS; do echo 0 > $T/events/sched/$e/enable; done
grep -v '^#' $T/trace > "$OUT"
wait
