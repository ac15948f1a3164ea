#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# demo.sh [SUITE]: "make demo": boot a kernel in a VM (as make check chooses it), load and mount
# the module, and show what it offers. The demo's part of the console log is printed at the end.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
kver=$(uname -r)
if [ -z "${1:-}" ] && [ -f "${KDIR:-/lib/modules/$kver/build}/Makefile" ] &&
	[ -r "/boot/vmlinuz-$kver" ]; then
	log=$top/build/vm/console.log
	"$top/tests/vm.sh" demo
else
	suite=${1:-trixie}
	log=$top/build/debian/$suite/console.log
	echo "demo: booting Debian $suite's kernel"
	"$top/tests/debian/run.sh" "$suite" demo
fi
rc=$?
echo
echo "demo: what the guest showed (from $log):"
# The demo's lines, without the kernel's (timestamped) ones.
sed -n '/^=== demo/,/^[A-Z]* demo/p' "$log" | grep -Ev '^\[ *[0-9]+\.[0-9]+\]' | tr -d '\r'
exit "$rc"
