#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# fpu-seed-test.sh [CSFCAT]: csfcat fpu-report and the unmerged series' own script
# (tests/fpu-seed/xsave-latency-trace.bash) print the same numbers for the same generated
# trace log: every row, every column of the script (event, RFBM, XINUSE, CNT, min, max, avg,
# avg of the fastest 97%). The script needs bash, sqlite3 and bc, which this installs on the
# host (tests/debian/deps.sh seed). Prints "PASS fpu-seed" or "FAIL fpu-seed (...)".
#
# The log must hold latencies past 32 bits (trace_clock()-sized ones, as the series warns of),
# and the rows a maximum past 32 bits, or the test fails: an awk that clamps them would leave
# that part of the comparison untested.
#
# FPU_SEED_LINES: events in the log (default 300). FPU_SEED_PLANT=1 adds one to the count of
# csfcat's first row before the comparison, which must then fail (the harness self-test,
# tests/debian/selftest.sh).
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
csfcat=${1:-$top/tools/csfcat}
lines=${FPU_SEED_LINES:-300}

fail() {
	echo "FAIL fpu-seed ($*)"
	exit 1
}

"$top/tests/debian/deps.sh" seed >/dev/null || fail "bash, sqlite3 and bc are needed"
[ -x "$csfcat" ] || fail "no csfcat at $csfcat (make user)"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

awk -v n="$lines" -v malformed=1 -f "$top/tests/fpu-seed/gen-log.awk" >"$dir/trace.log" ||
	fail "gen-log.awk failed"
big=$(awk '/latency:[0-9]+ / {
	v = $0; sub(/.*latency:/, "", v); sub(/ .*/, "", v)
	if (v + 0 > 4294967295) n++
} END { print n + 0 }' "$dir/trace.log")
[ "$big" -ge 2 ] ||
	fail "the log holds $big latencies past 32 bits, not 2 (awk: $(readlink -f "$(command -v awk)"))"
# The script works in its current directory (a database, a temporary file).
(cd "$dir" && bash "$top/tests/fpu-seed/xsave-latency-trace.bash" trace.log) \
	>"$dir/seed.out" 2>"$dir/seed.err" || fail "the series' script failed: $(tail -n 3 "$dir/seed.err")"
"$csfcat" fpu-report "$dir/trace.log" >"$dir/ours.out" || fail "csfcat fpu-report failed"

# The rows under the dashes, the script's eight columns; its progress lines end in \r.
rows() {
	tr '\r' '\n' <"$1" | awk '/^-+ / { on = 1; next } on && NF { print $1, $2, $3, $4, $5, $6, $7, $8 }'
}
rows "$dir/seed.out" >"$dir/seed.rows"
rows "$dir/ours.out" >"$dir/ours.rows"
if [ "${FPU_SEED_PLANT:-0}" = 1 ]; then
	echo "# FPU_SEED_PLANT=1: one more in the count of csfcat's first row"
	awk 'NR == 1 { $4 += 1 } { print }' "$dir/ours.rows" >"$dir/planted"
	mv "$dir/planted" "$dir/ours.rows"
fi
n=$(wc -l <"$dir/seed.rows")
[ "$n" -ge 10 ] || fail "the script printed $n rows; see $dir/seed.out"
awk '$6 > 4294967295 { found = 1 } END { exit !found }' "$dir/seed.rows" ||
	fail "no row of the script has a maximum past 32 bits"
if ! cmp -s "$dir/seed.rows" "$dir/ours.rows"; then
	diff "$dir/seed.rows" "$dir/ours.rows" | sed 's/^/#   /'
	fail "the numbers differ (< the script, > csfcat)"
fi
skipped=$(sed -n 's/.* \([0-9]*\) malformed lines skipped.*/\1/p' "$dir/ours.out")
echo "PASS fpu-seed ($n rows of $lines events, $skipped malformed lines skipped by both)"
