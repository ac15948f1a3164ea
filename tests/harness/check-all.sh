#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# check-all.sh SUITE...: "make check-all": run the tests on each suite's kernel in turn, then
# print each suite's result. Fails if any suite failed. The Debian packages that each suite's
# run installs (deb-install) are built once, here.
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
summary=""
bad=0
echo "check-all: building the Debian packages once (log: build/deb-test/build.log)"
if CSF_DEB_OUT="$top/build/deb-test" CSF_DEB_LINTIAN=0 "$top/scripts/deb.sh" >/dev/null 2>&1; then
	export CSF_DEBS="$top/build/deb-test"
else
	echo "check-all: make deb failed; each suite's run builds them and says why" >&2
fi
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
