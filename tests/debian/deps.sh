#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# deps.sh WHAT...: make sure the host has the Debian packages a task needs. Run as root, it
# installs what is missing; otherwise it prints the apt-get line to run and fails.
#   host   booting test guests (x86-64 and arm64): QEMU, mmdebstrap, cpio, util-linux
#   lib    compiling the library with each compiler it supports, for x86-64 and arm64, and
#          running its host tests for arm64 under qemu-user (make lib-check)
#   lint   the static checks (make lint)
#   compdb the editor's compile databases (make compdb)
#   seed   the unmerged XSAVE latency series' script (tests/user/fpu-seed-test.sh, make bench)
#   deb    building and checking the Debian packages (make deb)
set -eu

need=""
for what in "$@"; do
	case $what in
	host) list="qemu-system-x86_64:qemu-system-x86 qemu-system-aarch64:qemu-system-arm
		mmdebstrap:mmdebstrap cpio:cpio unshare:util-linux timeout:coreutils git:git" ;;
	lib) list="gcc:gcc g++:g++ clang:clang aarch64-linux-gnu-gcc:gcc-aarch64-linux-gnu
		aarch64-linux-gnu-g++:g++-aarch64-linux-gnu
		aarch64-linux-gnu-objdump:binutils-aarch64-linux-gnu qemu-aarch64-static:qemu-user-static" ;;
	lint) list="clang-format:clang-format clang-tidy:clang-tidy shellcheck:shellcheck perl:perl
		python3:python3 systemd-analyze:systemd git:git promtool:prometheus" ;;
	compdb) list="bear:bear python3:python3 clang:clang" ;;
	seed) list="bash:bash sqlite3:sqlite3 bc:bc" ;;
	deb) list="dpkg-buildpackage:dpkg-dev dh:debhelper dh_dkms:dh-dkms lintian:lintian
		make:make gcc:gcc git:git cpio:cpio" ;;
	*) echo "deps.sh: unknown set '$what'" >&2; exit 2 ;;
	esac
	for pair in $list; do
		command -v "${pair%%:*}" >/dev/null 2>&1 || need="$need ${pair#*:}"
	done
done
[ -n "$need" ] || exit 0
need=$(echo "$need" | tr ' ' '\n' | sort -u | tr '\n' ' ')

if ! command -v apt-get >/dev/null 2>&1; then
	echo "deps.sh: missing packages (Debian names):$need; install them with your package manager" >&2
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	echo "deps.sh: missing packages. Install them with:" >&2
	echo "  sudo apt-get install --no-install-recommends$need" >&2
	exit 1
fi
echo "deps.sh: installing$need"
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086 # a list of package names
apt-get install -y -q --no-install-recommends $need >/dev/null ||
	{ apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends $need >/dev/null; }
