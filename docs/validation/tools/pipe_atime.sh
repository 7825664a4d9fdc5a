#!/usr/bin/env bash
# Runs pipe_atime.c in rounds, anonymous pipe and FIFO back to back in each round (the order
# alternating between rounds) so that load from other tasks hits both kinds alike. Appends raw
# lines, each prefixed with the UTC time and the round, to the file given (default
# pipe-atime.raw). Usage: pipe_atime.sh [ROUNDS] [OUT]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
rounds="${1:-10}"
out="${2:-pipe-atime.raw}"
bin="${TMPDIR:-/tmp}/pipe_atime"
gcc -O2 -Wall -o "$bin" "$here/pipe_atime.c"
echo "# $(date -u +%FT%TZ) $(uname -r) rounds=$rounds load: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out"
for r in $(seq 1 "$rounds"); do
    if (( r % 2 )); then kinds="anon fifo"; else kinds="fifo anon"; fi
    for spec in "solo 320000" "solo-ext4 320000" "pp1 100000" "pp2 10000" "stream1 200000" "stream2 200000"; do
        set -- $spec
        for k in $kinds; do
            if [ "$1" = solo-ext4 ]; then
                line="$("$bin" solo "$k" "$2" /tmp | sed 's/^solo/solo-ext4/')"
            else
                line="$("$bin" "$1" "$k" "$2")"
            fi
            echo "$(date -u +%T) r$r $line" >>"$out"
        done
    done
done
