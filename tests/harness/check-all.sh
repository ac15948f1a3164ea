#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# check-all.sh SUITE...: "make check-all": run the tests on each suite's kernel in turn, then
# print each suite's result. Fails if any suite failed.
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
summary=""
bad=0
for suite in "$@"; do
	echo "=== $suite"
	if "$top/tests/debian/run.sh" "$suite"; then
		summary="$summary$suite: passed\n"
	else
		summary="$summary$suite: FAILED (logs in build/debian/$suite)\n"
		bad=$((bad + 1))
	fi
done
echo "=== summary"
printf "%b" "$summary"
[ "$bad" = 0 ]
