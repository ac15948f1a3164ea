#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# e2e-stage.sh ART: run inside a suite's environment (tests/debian/run.sh), from the tree: put
# the suite's own Debian prometheus and prometheus-node-exporter binaries, their libraries and
# the alert rules (packaging/csfcat-rules.yml) in ART/csf/e2e for the guest's end-to-end test
# (tests/e2e/t_e2e.c). The packages are downloaded once into the environment's
# /var/cache/csf-e2e (the environment is cached) and unpacked there, not installed.
set -eu

art=${1:?usage: e2e-stage.sh ART}
cache=/var/cache/csf-e2e
mkdir -p "$cache"
for p in prometheus prometheus-node-exporter; do
	if ! ls "$cache/${p}_"*.deb >/dev/null 2>&1; then
		echo "e2e-stage: downloading $p"
		(cd "$cache" && { apt-get download -q "$p" ||
			{ apt-get update -q && apt-get download -q "$p"; }; }) ||
			{ echo "e2e-stage: cannot download $p" >&2; exit 1; }
	fi
done
rm -rf "$cache/x"
for d in "$cache"/prometheus_*.deb "$cache"/prometheus-node-exporter_*.deb; do
	dpkg-deb -x "$d" "$cache/x"
done
dst=$art/csf/e2e
rm -rf "$dst"
mkdir -p "$dst"
cp "$cache/x/usr/bin/prometheus" "$cache/x/usr/bin/prometheus-node-exporter" "$dst/"
cp packaging/csfcat-rules.yml "$dst/"
# Their loader and libraries at their own paths, as stage-guest.sh does for t_lib.
for f in "$dst/prometheus" "$dst/prometheus-node-exporter"; do
	for lib in $(ldd "$f" 2>/dev/null |
		awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\/.*ld-linux/ { print $1 }'); do
		mkdir -p "$art$(dirname "$lib")"
		cp -L "$lib" "$art$lib"
	done
done
for d in "$cache"/*.deb; do
	echo "e2e-stage: staged from ${d##*/}"
done
