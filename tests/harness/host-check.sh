#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# host-check.sh [TEST...]: "make host-check": the host tests, run natively on this machine (no
# guest, no module, no root): builds csfcat and each test through make, runs each with csfcat
# from tools/ first in PATH, prints "PASS name" or "FAIL name" and a final "RESULT N" (the number
# that failed); fails if any did. A host test is tests/NAME.c, built as build/tests/NAME (its own
# rule in tests/Makefile when it links more than its file), with a "host" line in tests/list,
# or a guest test with the option "host" (t_format, t_fpu_report: no module needed):
#   t_mem_metrics  csfcat mem's metrics on fixed regions, linked as csfcat links them
#   t_mem_tune     the interval tuning csfcat does for our kdamond, against the kernel's arithmetic
#   t_mem_stat     csfcat mem on each kernel's DAMON_STAT parameters (tests/fixtures/damon-stat)
#   t_mem_signals  csfcat mem's stopping signals: one that waited is taken by an overdue sleep
#   t_prom         csfcat's Prometheus files (cpu, slices, fpu, mem): values, rules, promtool
#   btf_host       the module's BTF reader (kmod/btf.c) under ASan and UBSan: this host's BTF,
#                  broken blobs
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
# The host tests, and the guest's tests that need no module (the option "host").
mapfile -t tests < <(awk '!/^#/ && NF >= 3 {
	h = $3 == "host"; for (i = 4; i <= NF; i++) h = h || $i == "host"; if (h) print $2 }' tests/list)
[ "$#" -gt 0 ] && tests=("$@")
log=build/host-check
mkdir -p "$log"
failed=0
if ! make --no-print-directory tools/csfcat "${tests[@]/#/build/tests/}" >"$log/build.log" 2>&1; then
	cat "$log/build.log"
	for t in "${tests[@]}"; do
		echo "FAIL $t (does not build)"
	done
	echo "RESULT ${#tests[@]}"
	exit 1
fi
for t in "${tests[@]}"; do
	if PATH="$top/tools:$PATH" CSF_FIXTURES="$top/tests/fixtures" "build/tests/$t" \
		>"$log/$t.log" 2>&1; then
		echo "PASS $t"
	else
		grep -E '^(not ok|#   FAIL)' "$log/$t.log" | head -n 20
		echo "FAIL $t (log: $log/$t.log)"
		failed=$((failed + 1))
	fi
done
echo "RESULT $failed"
[ "$failed" = 0 ]
