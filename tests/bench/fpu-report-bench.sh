#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# fpu-report-bench.sh [CSFCAT]: how fast csfcat fpu-report reads a trace log, next to the
# unmerged series' own script (one sqlite3 process per line) on the same log, in one run on
# this machine; then csfcat alone on a log large enough to time (the same lines, repeated).
# Prints lines per second and the ratio; the target is at least a million lines per second.
# Needs bash, sqlite3 and bc for the script (tests/debian/deps.sh seed installs them).
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
csfcat=${1:-$top/tools/csfcat}
small=${FPU_BENCH_SMALL:-1000}
repeat=${FPU_BENCH_REPEAT:-2000}

"$top/tests/debian/deps.sh" seed >/dev/null
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

now() { date +%s.%N; }
rate() { echo "$1 $2 $3" | awk '{ printf "%.0f", $1 / ($3 - $2) }'; }

awk -v n="$small" -f "$top/tests/fpu-seed/gen-log.awk" >"$dir/small.log"
lines=$(wc -l <"$dir/small.log")
i=0
while [ "$i" -lt "$repeat" ]; do
	cat "$dir/small.log"
	i=$((i + 1))
done >"$dir/large.log"
large=$(wc -l <"$dir/large.log")

t0=$(now)
(cd "$dir" && bash "$top/tests/fpu-seed/xsave-latency-trace.bash" small.log) >/dev/null 2>&1
t1=$(now)
"$csfcat" fpu-report "$dir/small.log" >/dev/null
t2=$(now)
"$csfcat" fpu-report "$dir/large.log" >/dev/null
t3=$(now)

seed=$(rate "$lines" "$t0" "$t1")
ours_small=$(rate "$lines" "$t1" "$t2")
ours=$(rate "$large" "$t2" "$t3")
printf '\nfpu-report throughput on this machine (%s)\n\n' "$(uname -m), $(nproc) CPUs"
printf '%-48s %10s %12s %14s\n' "reader" "lines" "seconds" "lines/s"
printf '%-48s %10s %12.3f %14s\n' "the series' script (bash, sqlite3, bc)" "$lines" \
	"$(echo "$t1 - $t0" | bc)" "$seed"
printf '%-48s %10s %12.3f %14s\n' "csfcat fpu-report, the same log" "$lines" \
	"$(echo "$t2 - $t1" | bc)" "$ours_small"
printf '%-48s %10s %12.3f %14s\n' "csfcat fpu-report, that log $repeat times" "$large" \
	"$(echo "$t3 - $t2" | bc)" "$ours"
echo
echo "ratio: csfcat reads $((ours / seed)) times as many lines per second as the script" \
	"($((ours_small / seed)) times on the small log, process start included)"
if [ "$ours" -ge 1000000 ]; then
	echo "target: at least 1000000 lines/s: met ($ours)"
else
	echo "target: at least 1000000 lines/s: NOT met ($ours)"
fi
