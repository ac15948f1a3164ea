#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# vm.sh [TEST...]: run the tests on the running kernel, booted in QEMU, with the module built
# against its headers (KDIR). Output and logs as tests/debian/run.sh, under build/vm/.
# Needs the kernel's headers, a readable /boot/vmlinuz-$(uname -r), QEMU, cpio and
# busybox-static; VM_* settings as in tests/harness/guest.sh.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
kver=$(uname -r)
kdir=${KDIR:-/lib/modules/$kver/build}
out=$top/build/vm

cd "$top"
mkdir -p "$out"
echo "vm: building against $kdir (log: $out/build.log)"
if ! { make STATIC=1 KDIR="$kdir" all test-modules &&
	tests/harness/stage-guest.sh "$out/art" "/lib/modules/$kver"; } >"$out/build.log" 2>&1; then
	tail -n 30 "$out/build.log"
	echo "vm: build failed; full log in $out/build.log"
	echo "RESULT 1"
	exit 1
fi
exec tests/harness/guest.sh "/boot/vmlinuz-$kver" "/boot/config-$kver" "$out/art" "$out" "$@"
