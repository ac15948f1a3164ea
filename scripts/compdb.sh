#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# compdb.sh: "make compdb". Writes compile_commands.json for user space (recorded by bear while
# make rebuilds it) and kmod/compile_commands.json for the module (scripts/kmod-compdb.py, from
# kbuild's commands). The module is built against KDIR when its headers are there, and inside
# Debian trixie's environment otherwise; clangd then reads both. Run it again after adding files.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
kdir=${KDIR:-/lib/modules/$(uname -r)/build}

echo "compdb: user space (bear -- make -B user)"
bear --output compile_commands.json -- make --no-print-directory -B user >/dev/null

if [ -f "$kdir/Makefile" ]; then
	echo "compdb: the module, against $kdir"
	make --no-print-directory module KDIR="$kdir" >/dev/null
	python3 scripts/kmod-compdb.py --kmod kmod --kdir "$(readlink -f "$kdir")" \
		-o kmod/compile_commands.json
else
	suite=${SUITE:-trixie}
	echo "compdb: the module, in Debian $suite's environment (no headers in $kdir)"
	root=$(tests/debian/suite-env.sh "$suite")
	# shellcheck source=tests/debian/env-lock.sh
	. tests/debian/env-lock.sh
	env_lock "$root" "$suite"
	kver=$(ls "$root/usr/lib/modules")
	# shellcheck disable=SC2016 # $KVER is expanded inside the environment
	tests/debian/in-env.sh --fresh "$suite" \
		'make -C /lib/modules/$KVER/build M=/csf/src/kmod modules' >/dev/null
	python3 scripts/kmod-compdb.py --kmod "$root/csf/src/kmod" \
		--kdir "$(chroot "$root" readlink -f "/lib/modules/$kver/build")" --root "$root" \
		--src-map "/csf/src=$top" -o kmod/compile_commands.json
fi
echo "compdb: wrote compile_commands.json and kmod/compile_commands.json"
