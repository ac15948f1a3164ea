#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# deb.sh: "make deb": the Debian packages, built from this tree with Debian's own tools
# (dpkg-buildpackage, debhelper, dh-dkms; packaging/debian/), checked by lintian, in build/deb/:
#   coarse-stat-fs-dkms   the module's source for DKMS, its modules-load.d entry, the mount unit
#   csfcat                csfcat, its man page, its services and their settings
#   coarse-stat-fs-dev    the library's header, the ABI header, the pkg-config file
# Installs what it needs when run as root (tests/debian/deps.sh deb); fails on any lintian
# error or warning that packaging/debian/*.lintian-overrides does not explain.
#   CSF_DEB_OUT      where the packages go (default build/deb; emptied first)
#   CSF_DEB_LINTIAN  0: leave lintian out (the guest tests, which make lint's run has checked)
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
"$top/tests/debian/deps.sh" deb
version=$(sed -n 's/^VERSION := //p' Makefile)
out=${CSF_DEB_OUT:-$top/build/deb}
src=$out/coarse-stat-fs-$version

echo "deb: copying the tree to $src"
rm -rf "$out"
mkdir -p "$src"
# What git tracks (and what is added but not yet committed); a tree without git: all but build/.
if git rev-parse --git-dir >/dev/null 2>&1; then
	git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$src"
else
	find . -path ./build -prune -o -type f -print | cpio -pdm --quiet "$src"
fi
mv "$src/packaging/debian" "$src/debian"

echo "deb: dpkg-buildpackage (binary packages, unsigned)"
(cd "$src" && dpkg-buildpackage -b -us -uc) >"$out/build.log" 2>&1 || {
	tail -n 30 "$out/build.log"
	echo "deb: dpkg-buildpackage failed; the whole log is $out/build.log" >&2
	exit 1
}

[ "${CSF_DEB_LINTIAN:-1}" != 0 ] || { ls "$out"/*.deb; exit 0; }
echo "deb: lintian"
# Errors and warnings fail; what an override explains is reported as overridden, not failed.
if ! lintian --fail-on error,warning --display-info "$out"/*.changes >"$out/lintian.log" 2>&1; then
	cat "$out/lintian.log"
	echo "deb: lintian found errors or warnings (above; $out/lintian.log)" >&2
	exit 1
fi
grep -v '^N:' "$out/lintian.log" || true
ls -l "$out"/*.deb
