#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# install-test.sh KDIR: "make install" into a scratch root installs every file where the README
# says, a program builds against the installed header through pkg-config, and "make
# uninstall" removes it all. Run from a built tree (tests/debian/run.sh runs it inside each
# suite's environment). Prints "PASS install" or "FAIL install (...)".
set -u

kdir=${1:?usage: install-test.sh KDIR}
scratch=$(mktemp -d)
log=$scratch.log
kver=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"/\1/p' "$kdir/include/generated/utsrelease.h")
trap 'rm -rf "$scratch" "$log"' EXIT

fail() {
	echo "FAIL install ($*)"
	sed 's/^/#   /' "$log" | tail -n 20
	exit 1
}

make --no-print-directory install DESTDIR="$scratch" PREFIX=/usr KDIR="$kdir" >"$log" 2>&1 ||
	fail "make install failed"

for f in usr/bin/csfcat usr/share/man/man1/csfcat.1 usr/include/coarse_stat_fs.h \
	usr/include/linux/coarse_stat_fs.h usr/share/pkgconfig/coarse_stat_fs.pc \
	usr/lib/systemd/system/sys-kernel-coarse_stat_fs.mount \
	usr/lib/systemd/system/csfcat-slices.service usr/lib/systemd/system/csfcat-mem.service \
	etc/default/csfcat usr/lib/modules-load.d/coarse_stat_fs.conf; do
	[ -s "$scratch/$f" ] || fail "no /$f"
done
for u in csfcat-slices csfcat-mem; do
	grep -q '^ExecStart=/usr/bin/csfcat ' "$scratch/usr/lib/systemd/system/$u.service" ||
		fail "$u.service does not run the installed /usr/bin/csfcat"
done
[ -x "$scratch/usr/bin/csfcat" ] || fail "csfcat is not executable"
ls "$scratch/lib/modules/$kver/updates/coarse_stat_fs.ko"* >/dev/null 2>&1 ||
	fail "no module under /lib/modules/$kver/updates"

# A program outside the source tree, built only from what was installed.
prog=$scratch/tmp/prog
mkdir -p "$prog"
sed 's|"[./]*lib/coarse_stat_fs.h"|<coarse_stat_fs.h>|' tests/user/lib_compile.c >"$prog/main.c"
cflags=$(PKG_CONFIG_SYSROOT_DIR=$scratch PKG_CONFIG_LIBDIR=$scratch/usr/share/pkgconfig \
	pkg-config --cflags --libs coarse_stat_fs) || fail "pkg-config does not know coarse_stat_fs"
# shellcheck disable=SC2086 # compiler flags
gcc -std=c11 -Wall -Wextra -Werror -o "$prog/main" "$prog/main.c" $cflags >>"$log" 2>&1 ||
	fail "a program does not build against the installed header ($cflags)"
rm -rf "$prog" "$scratch/tmp"

make --no-print-directory uninstall DESTDIR="$scratch" PREFIX=/usr KDIR="$kdir" >>"$log" 2>&1 ||
	fail "make uninstall failed"
left=$(find "$scratch" -type f | sed "s|^$scratch||")
[ -z "$left" ] || fail "make uninstall left: $left"
echo "PASS install"
