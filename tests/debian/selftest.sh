#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# selftest.sh [SUITE [CASE...]]: show that the harness catches what it must (all cases, or the
# CASEs named). Each case runs run.sh with a test that misbehaves on purpose, and passes only if
# run.sh fails for the expected reason:
#   selftest-warn   a kernel warning (tests/harness/selftest/csf_selftest.ko action=warn)
#   selftest-panic  a kernel panic (action=panic)
#   selftest-fail   a test program with a failing check (tests/harness/t_selftest_fail.c)
#   selftest-hang   a guest that never finishes (VM_TIMEOUT)
#   selftest-host   a host test that fails (fpu-seed, FPU_SEED_PLANT=1): run.sh must still run
#                   the guest's tests, print the host test's FAIL line and count it in RESULT
# With SUITE debug, also each checker of the debug kernel (csf_selftest.ko action=...):
#   selftest-uaf       a use after free (KASAN)
#   selftest-leak      an unreferenced allocation (kmemleak, scanned at the end of the run)
#   selftest-lockdep   two locks taken in both orders (lockdep)
#   selftest-sleep     might_sleep() with preemption off (DEBUG_ATOMIC_SLEEP)
#   selftest-ubsan     a shift out of bounds (UBSAN)
#   selftest-list      an entry added to a list twice (DEBUG_LIST)
#   selftest-refcount  a refcount dropped below zero (refcount_t's checks)
#   selftest-noisy-lockdep  the lockdep report between the noise markers: still a failure
# Prints one line per case and a final "RESULT <failures>".
set -uo pipefail

suite=${1:-trixie}
[ $# = 0 ] || shift
cases=" $* "
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/debian/$suite-selftest
mkdir -p "$out"
fails=0
built=0

# expect NAME PATTERN [VAR=VALUE...]: run.sh must fail and print a line matching PATTERN.
expect() {
	local name=$1 pattern=$2 log=$out/$1.log rc
	shift 2
	[ "$cases" = "  " ] || [[ $cases == *" $name "* ]] || return 0
	echo "selftest[$suite]: $name (log: $log)"
	# The first case builds; the others boot what it built (the tree is the same).
	env CSF_HOST_TESTS=0 CSF_REUSE_BUILD="$built" "$@" "$top/tests/debian/run.sh" "$suite" \
		"$name" >"$log" 2>&1
	rc=$?
	built=1
	if [ "$rc" = 0 ]; then
		echo "FAIL $name (run.sh passed; it must fail)"
		fails=$((fails + 1))
	elif ! grep -Eq "$pattern" "$log"; then
		echo "FAIL $name (run.sh failed, but without a line matching: $pattern)"
		tail -n 20 "$log"
		fails=$((fails + 1))
	else
		echo "PASS $name (caught: $(grep -Em1 "$pattern" "$log" | tr -d '\r' | cut -c1-90))"
	fi
}

expect selftest-warn 'WARNING:.*csf_selftest|csf_selftest: warning on demand'
expect selftest-panic 'Kernel panic.*csf_selftest: panic on demand'
expect selftest-fail '^FAIL selftest-fail'
expect selftest-hang 'guest timed out after 45s' VM_TIMEOUT=45
# A failing host test must not end the run before the guest's tests (set -e in run.sh did).
host_case() {
	local name=selftest-host log=$out/selftest-host.log rc why=""
	[ "$cases" = "  " ] || [[ $cases == *" $name "* ]] || return 0
	echo "selftest[$suite]: $name (log: $log)"
	env CSF_HOST_TESTS=fpu-seed FPU_SEED_PLANT=1 CSF_REUSE_BUILD="$built" \
		"$top/tests/debian/run.sh" "$suite" fs \
		>"$log" 2>&1
	rc=$?
	[ "$rc" != 0 ] || why+="; run.sh passed"
	grep -q '^FAIL fpu-seed' "$log" || why+="; no FAIL fpu-seed line"
	grep -q '^PASS fs' "$log" || why+="; the guest test fs did not pass"
	grep -q '^PASS kernel-log' "$log" || why+="; the guest did not finish its checks"
	grep -q '^RESULT 1$' "$log" || why+="; not RESULT 1: $(grep '^RESULT' "$log" || echo none)"
	if [ -n "$why" ]; then
		echo "FAIL $name (${why#; })"
		tail -n 20 "$log"
		fails=$((fails + 1))
	else
		echo "PASS $name (FAIL fpu-seed, the guest's tests passed, RESULT 1)"
	fi
}
host_case
if [ "$suite" = debug ]; then
	expect selftest-uaf 'BUG: KASAN: slab-use-after-free'
	expect selftest-leak '^FAIL kmemleak'
	expect selftest-lockdep 'possible circular locking dependency'
	expect selftest-sleep 'BUG: sleeping function called from invalid context'
	expect selftest-ubsan 'UBSAN: shift-out-of-bounds'
	expect selftest-list 'list_add double add'
	expect selftest-refcount 'refcount_t: (decrement hit 0|underflow)'
	expect selftest-noisy-lockdep 'possible circular locking dependency'
fi

echo "RESULT $fails"
[ "$fails" = 0 ]
