#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh SUITE [TEST...]: build the module and the tests with a Debian suite's own compiler and
# kernel headers, boot that suite's kernel in QEMU and run the tests there (all by default; the
# names are those of tests/vm-inner.sh).
#
#   SUITE  bookworm (6.1), trixie (6.12), trixie-backports (the newest Debian kernel) or sid
#
# Prints one line per test and a final "RESULT <failures>"; exits non-zero on any failure.
# Logs: build/debian/SUITE/{build,console,results}.log. The suite's environment is cached under
# $CSF_CACHE (default ~/.cache/coarse_stat_fs); see suite-env.sh. VM_* settings: tests/guest.sh.
set -euo pipefail

suite=${1:?usage: run.sh SUITE [TEST...]  (SUITE: bookworm, trixie, trixie-backports, sid)}
shift
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/debian/$suite

"$top/tests/debian/deps.sh" host
if [ "$(id -u)" != 0 ]; then
	echo "run[$suite]: mmdebstrap and chroot need root: running through sudo"
	exec sudo --preserve-env=CSF_CACHE,VM_TIMEOUT,VM_DEBUG,VM_ACCEL,VM_SMP,VM_MEM \
		"$0" "$suite" "$@"
fi

say() { echo "run[$suite]: $*"; }

root=$("$top/tests/debian/suite-env.sh" "$suite")
kver=$(ls "$root/usr/lib/modules")
[ "$(echo "$kver" | wc -w)" = 1 ] || { say "expected one kernel in $root, found: $kver"; exit 1; }
mkdir -p "$out"

# A private copy of the sources in the environment: builds for different suites never share
# object files, and the work tree stays clean.
say "building for $kver with $(chroot "$root" gcc -dumpfullversion) (log: $out/build.log)"
rm -rf "$root/csf"
mkdir -p "$root/csf/src"
existing() { # the NUL-separated paths on stdin that exist (skips deleted, uncommitted files)
	while IFS= read -r -d '' f; do
		[ ! -e "$top/$f" ] || printf '%s\0' "$f"
	done
}
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$top" ls-files -z --cached --others --exclude-standard | existing |
		tar -C "$top" --null -T - -cf - | tar -C "$root/csf/src" -xf -
else
	tar -C "$top" --exclude=./build --exclude=./.git -cf - . | tar -C "$root/csf/src" -xf -
fi

# shellcheck disable=SC2016 # expanded by the inner shell
if ! unshare -m --propagation private sh -c 'mount -t proc proc "$1/proc" && chroot "$1" sh -c "$2"' \
	sh "$root" "cd /csf/src && make STATIC=1 KDIR=/lib/modules/$kver/build WERROR=1 all test-modules \
		&& tests/stage-guest.sh /csf/art /lib/modules/$kver" >"$out/build.log" 2>&1; then
	tail -n 30 "$out/build.log"
	say "build failed; full log in $out/build.log"
	echo "RESULT 1"
	exit 1
fi

"$top/tests/guest.sh" "$root/boot/vmlinuz-$kver" "$root/boot/config-$kver" "$root/csf/art" \
	"$out" "$@"
