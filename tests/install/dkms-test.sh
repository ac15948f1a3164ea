#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# dkms-test.sh KVER ART: a real "dkms add/build/install" of the module for kernel KVER, whose
# headers are installed, as a user would run it ("make dkms-install"); the module DKMS built is
# staged as ART/csf/dkms/coarse_stat_fs.ko for the guest to load (tests/harness/vm-inner.sh, test
# "dkms"), and DKMS is left clean. Prints "PASS dkms-build" or "FAIL dkms-build (...)".
set -u

kver=${1:?usage: dkms-test.sh KVER ART}
art=${2:?usage: dkms-test.sh KVER ART}
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
log=/tmp/dkms-test.log

fail() {
	echo "FAIL dkms-build ($*)"
	sed 's/^/#   /' "$log" | tail -n 25
	make --no-print-directory dkms-uninstall >/dev/null 2>&1
	exit 1
}

make --no-print-directory dkms-uninstall >"$log" 2>&1
make --no-print-directory dkms-install DKMS_KERNEL="$kver" >>"$log" 2>&1 ||
	fail "make dkms-install failed"
dkms status -m coarse_stat_fs -v "$version" -k "$kver" >>"$log" 2>&1
dkms status -m coarse_stat_fs -v "$version" -k "$kver" 2>/dev/null | grep -q installed ||
	fail "dkms does not list it as installed for $kver"

ko=$(find "/lib/modules/$kver/updates/dkms" -name 'coarse_stat_fs.ko*' 2>/dev/null | head -n 1)
[ -n "$ko" ] || fail "no module in /lib/modules/$kver/updates/dkms"
mkdir -p "$art/csf/dkms"
case $ko in
*.xz) xz -dc "$ko" >"$art/csf/dkms/coarse_stat_fs.ko" ;;
*.zst) zstd -qdc "$ko" >"$art/csf/dkms/coarse_stat_fs.ko" ;;
*) cp "$ko" "$art/csf/dkms/coarse_stat_fs.ko" ;;
esac

make --no-print-directory dkms-uninstall >>"$log" 2>&1 || fail "make dkms-uninstall failed"
[ ! -e "$ko" ] || fail "dkms remove left $ko"
echo "PASS dkms-build"
