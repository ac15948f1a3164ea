#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# deb-test.sh KVER ART DEBDIR: the packages of "make deb" (in DEBDIR), as a user installs them
# in a suite's environment whose kernel KVER has its headers: "apt-get install ./*.deb" makes
# DKMS build the module for KVER, csfcat and the headers land where the README says, the mount
# unit is enabled and the services are not; "apt-get purge" then removes the module from DKMS
# and leaves none of the packages' files behind. The module DKMS built and the packaged csfcat
# are staged in ART/csf/deb/ for the guest (tests/harness/vm-inner.sh, test "deb"). Prints
# "PASS deb-install" or "FAIL deb-install (...)".
set -u

kver=${1:?usage: deb-test.sh KVER ART DEBDIR}
art=${2:?usage: deb-test.sh KVER ART DEBDIR}
debdir=${3:?usage: deb-test.sh KVER ART DEBDIR}
pkgs="coarse-stat-fs-dkms csfcat csfcat-dbgsym coarse-stat-fs-dev"
log=/tmp/deb-test.log
files=/tmp/deb-test.files
export DEBIAN_FRONTEND=noninteractive

purge() {
	# shellcheck disable=SC2086 # a list of package names
	apt-get purge -y -q $pkgs >>"$log" 2>&1
}
fail() {
	echo "FAIL deb-install ($*)"
	sed 's/^/#   /' "$log" | tail -n 25
	purge
	exit 1
}

: >"$log"
purge # what a failed earlier run left
apt-get install -y -q --no-install-recommends "$debdir"/*.deb >>"$log" 2>&1 ||
	fail "apt-get install ./*.deb failed"
dkms status -m coarse_stat_fs >>"$log" 2>&1
dkms status -m coarse_stat_fs -k "$kver" 2>/dev/null | grep -q installed ||
	fail "DKMS did not build and install the module for $kver"
ko=$(find "/lib/modules/$kver/updates/dkms" -name 'coarse_stat_fs.ko*' 2>/dev/null | head -n 1)
[ -n "$ko" ] || fail "no module in /lib/modules/$kver/updates/dkms"

for f in /usr/bin/csfcat /usr/share/man/man1/csfcat.1.gz /etc/default/csfcat \
	/lib/systemd/system/csfcat-slices.service /lib/systemd/system/csfcat-mem.service \
	/lib/systemd/system/sys-kernel-coarse_stat_fs.mount /lib/modules-load.d/coarse_stat_fs.conf \
	/usr/include/coarse_stat_fs.h /usr/include/linux/coarse_stat_fs.h \
	/usr/share/pkgconfig/coarse_stat_fs.pc; do
	[ -s "$f" ] || fail "no $f"
done
pkg-config --cflags coarse_stat_fs >>"$log" 2>&1 || fail "pkg-config does not know coarse_stat_fs"
[ -L /etc/systemd/system/sysinit.target.wants/sys-kernel-coarse_stat_fs.mount ] ||
	fail "the mount unit is not enabled"
for u in csfcat-slices csfcat-mem; do
	[ ! -e "/etc/systemd/system/multi-user.target.wants/$u.service" ] ||
		fail "$u.service is enabled: the services are off until an administrator enables them"
done

rm -rf "$art/csf/deb"
mkdir -p "$art/csf/deb"
case $ko in
*.xz) xz -dc "$ko" >"$art/csf/deb/coarse_stat_fs.ko" ;;
*.zst) zstd -qdc "$ko" >"$art/csf/deb/coarse_stat_fs.ko" ;;
*) cp "$ko" "$art/csf/deb/coarse_stat_fs.ko" ;;
esac
cp /usr/bin/csfcat "$art/csf/deb/csfcat"

# Every file the packages installed, and what DKMS made: all must go with a purge.
# shellcheck disable=SC2086 # a list of package names
dpkg -L $pkgs 2>/dev/null | while read -r f; do [ -d "$f" ] || echo "$f"; done >"$files"
echo "$ko" >>"$files"
purge || fail "apt-get purge failed"
[ -z "$(dkms status -m coarse_stat_fs 2>/dev/null)" ] || fail "DKMS still lists coarse_stat_fs"
left=$(while read -r f; do [ ! -e "$f" ] && [ ! -L "$f" ] || echo "$f"; done <"$files")
for d in /usr/src/coarse_stat_fs-* /var/lib/dkms/coarse_stat_fs \
	/etc/systemd/system/sysinit.target.wants/sys-kernel-coarse_stat_fs.mount; do
	[ ! -e "$d" ] && [ ! -L "$d" ] || left="$left $d"
done
[ -z "$left" ] || fail "apt-get purge left: $left"
rm -f "$files"
echo "PASS deb-install"
