#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# selftest.sh [SUITE]: show that the harness catches what it must. Each case runs run.sh with
# a test that misbehaves on purpose, and passes only if run.sh fails for the expected reason:
#   selftest-warn   a kernel warning (tests/selftest/csf_selftest.ko action=warn)
#   selftest-panic  a kernel panic (action=panic)
#   selftest-fail   a test program with a failing check (tests/t_selftest_fail.c)
#   selftest-hang   a guest that never finishes (VM_TIMEOUT)
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
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/debian/$suite-selftest
mkdir -p "$out"
fails=0

# expect NAME PATTERN [VAR=VALUE...]: run.sh must fail and print a line matching PATTERN.
expect() {
	local name=$1 pattern=$2 log=$out/$1.log rc
	shift 2
	echo "selftest[$suite]: $name (log: $log)"
	env CSF_HOST_TESTS=0 "$@" "$top/tests/debian/run.sh" "$suite" "$name" >"$log" 2>&1
	rc=$?
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
