#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# check.sh [SUITE]: "make check". With SUITE, test that Debian suite's kernel. Without, test the
# running kernel in a VM when that is possible (its headers, its image and QEMU are here),
# otherwise Debian trixie's kernel. Says which it chose, and why. T (make check T=...): the tests
# to run, comma-separated, each NAME or NAME:SCENARIO (docs/testing.md); all when empty.
set -eu

suite=${1:-}
# shellcheck disable=SC2046 # test names: words
set -- $(echo "${T:-}" | tr , ' ')

top=$(cd "$(dirname "$0")/../.." && pwd)
if [ -n "$suite" ]; then
	echo "check: testing Debian $suite's kernel (tests/debian/run.sh $suite)"
	exec "$top/tests/debian/run.sh" "$suite" "$@"
fi

kver=$(uname -r)
kdir=${KDIR:-/lib/modules/$kver/build}
why=""
[ -f "$kdir/Makefile" ] || why="no headers in $kdir"
[ -n "$why" ] || [ -r "/boot/vmlinuz-$kver" ] || why="/boot/vmlinuz-$kver is not readable"
[ -n "$why" ] || command -v qemu-system-x86_64 >/dev/null || why="QEMU is not installed"
if [ -z "$why" ]; then
	echo "check: testing the running kernel $kver in a VM (tests/harness/vm.sh)"
	exec "$top/tests/harness/vm.sh" "$@"
fi
echo "check: cannot test the running kernel $kver ($why);"
echo "check: testing Debian trixie's kernel instead (tests/debian/run.sh trixie)"
exec "$top/tests/debian/run.sh" trixie "$@"
