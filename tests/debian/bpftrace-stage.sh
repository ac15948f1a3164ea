#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# bpftrace-stage.sh ART: run inside a suite's environment (tests/debian/run.sh), from the tree:
# put the suite's own Debian bpftrace in ART/csf/bpftrace, and the libraries it loads at their
# own paths, for the long-slice watch's benchmark (tests/bench/bench.c, "bench --slices"), which
# times the watch next to a bpftrace program doing the same bookkeeping. The packages bpftrace
# needs that the environment lacks (LLVM, clang, libbpf, bcc...) are downloaded once into the
# environment's /var/cache/csf-bpftrace (the environment is cached) and unpacked there, not
# installed.
set -eu

art=${1:?usage: bpftrace-stage.sh ART}
cache=/var/cache/csf-bpftrace
debs=$cache/debs
mkdir -p "$debs/partial"
if ! ls "$debs"/bpftrace_*.deb >/dev/null 2>&1; then
	echo "bpftrace-stage: downloading bpftrace and what it depends on"
	get() {
		apt-get install -q -y --download-only --no-install-recommends \
			-o Dir::Cache::archives="$debs" bpftrace
	}
	get || { apt-get update -q && get; } ||
		{ echo "bpftrace-stage: cannot download bpftrace" >&2; exit 1; }
fi
x=$cache/x
rm -rf "$x"
for d in "$debs"/*.deb; do
	dpkg-deb -x "$d" "$x"
done
dst=$art/csf/bpftrace
rm -rf "$dst"
mkdir -p "$dst"
cp "$x/usr/bin/bpftrace" "$dst/"
# Its loader and libraries at their own paths, as e2e-stage.sh does: those of the unpacked
# packages from where they were unpacked, the others from the environment.
libpath=$x/usr/lib/x86_64-linux-gnu:$x/lib/x86_64-linux-gnu
if LD_LIBRARY_PATH=$libpath ldd "$dst/bpftrace" | grep 'not found'; then
	echo "bpftrace-stage: libraries of bpftrace missing" >&2
	exit 1
fi
for lib in $(LD_LIBRARY_PATH=$libpath ldd "$dst/bpftrace" |
	awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\/.*ld-linux/ { print $1 }'); do
	to=${lib#"$x"}
	mkdir -p "$art$(dirname "$to")"
	cp -L "$lib" "$art$to"
done
echo "bpftrace-stage: staged $(LD_LIBRARY_PATH=$libpath "$dst/bpftrace" --version 2>/dev/null ||
	echo bpftrace) ($(du -sh "$art" | cut -f1) with its libraries)"
