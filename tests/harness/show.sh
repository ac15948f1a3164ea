#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# show.sh TEST: boot a kernel in a VM (the running one when tests/harness/check.sh can, else Debian
# $SUITE's, trixie by default), run one guest test and print what it showed. "make demo" runs
# the demo (tests/harness/demo-guest.sh); "make bench" the benchmark (tests/bench/bench.c), with
# VM_DEBUG=0.
set -u

test=${1:?usage: show.sh TEST}
top=$(cd "$(dirname "$0")/../.." && pwd)
kver=$(uname -r)
if [ -z "${SUITE:-}" ] && [ -f "${KDIR:-/lib/modules/$kver/build}/Makefile" ] &&
	[ -r "/boot/vmlinuz-$kver" ]; then
	log=$top/build/vm/console.log
	"$top/tests/harness/vm.sh" "$test"
else
	suite=${SUITE:-trixie}
	log=$top/build/debian/$suite/console.log
	echo "$test: booting Debian $suite's kernel"
	"$top/tests/debian/run.sh" "$suite" "$test"
fi
rc=$?
echo
echo "$test: what the guest showed (from $log):"
# The test's lines, without the kernel's (timestamped) ones; TEST:SCENARIO shows TEST's.
name=${test%%:*}
sed -n "/^=== ${name}[-:]/,/^[A-Z]* $name/p" "$log" | grep -Ev '^\[ *[0-9]+\.[0-9]+\]' | tr -d '\r'
exit "$rc"
