#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# suite-env.sh SUITE: make sure the cached build-and-boot environment for a Debian suite exists
# and carries the suite's current kernel, then print its root directory on stdout.
#
# The environment is a chroot made by mmdebstrap: the suite's own compiler, the headers and
# image of its kernel, busybox for the guest. It lives outside the work tree, in
# $CSF_CACHE/debian/SUITE (default ~/.cache/coarse_stat_fs), and is rebuilt only when the
# archive's kernel package or the package list below changes. Needs root.
set -eu

suite=${1:?usage: suite-env.sh SUITE}
cache=${CSF_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/coarse_stat_fs}
dir=$cache/debian/$suite
root=$dir/root

# Packages of the environment; changing this list rebuilds it.
pkgs="build-essential busybox-static cpio dkms kmod pkgconf sparse xz-utils zstd"
kpkgs="linux-headers-amd64 linux-image-amd64"

say() { printf '%s\n' "suite-env[$suite]: $*" >&2; }
die() { say "error: $*"; exit 1; }

# The archive copy this machine reaches can lag: accept Release files past their Valid-Until
# date, and say so below when that happens.
aptopt='Acquire::Check-Valid-Until "false"'

# The kernel meta package whose version decides when to rebuild.
kimage=linux-image-amd64
[ "$suite" != trixie-rt ] || kimage=linux-image-rt-amd64
arches=amd64

case $suite in
bookworm | trixie | sid)
	base=$suite
	kinclude=$(echo "$kpkgs" | tr ' ' ',')
	;;
trixie-rt)
	# trixie with its PREEMPT_RT kernel flavour (linux-image-rt-amd64).
	base=trixie
	kinclude="linux-headers-rt-amd64,linux-image-rt-amd64"
	;;
debug)
	# trixie, with what building a kernel takes and trixie's kernel source: debug-kernel.sh
	# builds the debug kernel from it (cached apart) and installs it here, in place of a
	# packaged one. The source package's version decides when to rebuild.
	base=trixie
	kimage=linux-source
	kinclude="bc,bison,flex,libelf-dev,libssl-dev,linux-source"
	;;
trixie-backports)
	# Stable userland, kernel from backports: add the backports line next to the line
	# mmdebstrap writes for its default mirror, so no host name is written here.
	base=trixie
	kinclude="linux-headers-amd64/trixie-backports,linux-image-amd64/trixie-backports"
	;;
trixie-arm64 | trixie-backports-arm64)
	# trixie's (or trixie-backports') arm64 kernel, built for with Debian's cross compiler on
	# this amd64 host, no emulation: amd64 tools, arm64 as a foreign architecture for the
	# kernel, its headers and the guest's busybox. The headers are unpacked rather than
	# installed (arm64_headers): their package wants the arm64 gcc-14, which cannot run here;
	# the cross gcc-14 is the same compiler. The cross compiler and C library, for the module
	# and the static test programs.
	base=trixie
	arches=amd64,arm64
	kimage=linux-image-arm64:arm64
	pkgs=$(echo "$pkgs" | sed 's/busybox-static/busybox-static:arm64/')
	kinclude="linux-image-arm64:arm64"
	# Backports' kernel pre-depends on a newer linux-base than trixie's.
	[ "$suite" != trixie-backports-arm64 ] ||
		kinclude="linux-image-arm64:arm64/trixie-backports,linux-base/trixie-backports"
	kinclude="$kinclude,gcc-aarch64-linux-gnu,g++-aarch64-linux-gnu"
	kinclude="$kinclude,libc6-dev-arm64-cross,binutils-aarch64-linux-gnu,dwarves"
	;;
*)
	die "unknown suite '$suite' (bookworm, trixie, trixie-rt, trixie-backports, trixie-arm64, trixie-backports-arm64, debug or sid)"
	;;
esac

[ "$(id -u)" = 0 ] || die "needs root (mmdebstrap and chroot); run it with sudo"
command -v mmdebstrap >/dev/null || die "mmdebstrap is missing: apt-get install mmdebstrap"

# One builder at a time per suite (CI builds environments ahead of the runs that use them): a
# second caller waits, then finds the environment built.
mkdir -p "$dir"
exec 8>"$dir/build.lock"
if ! flock -n 8; then
	say "waiting for the environment's build by another process"
	flock 8
fi

in_root() {
	# A private mount namespace: /proc vanishes with the command, whatever happens to it.
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare -m --propagation private sh -c 'mount -t proc proc "$1/proc" && shift && chroot "$@"' \
		sh "$root" "$root" "$@"
}

# Print the kernel package version the archive offers now, or nothing when it cannot be asked.
archive_kernel() {
	cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
	if ! in_root apt-get -q -o Acquire::Check-Valid-Until=false update >"$dir/apt-update.log" 2>&1; then
		say "could not reach the archive (see $dir/apt-update.log); keeping the cached environment"
		return 0
	fi
	expired_note
	if [ "$suite" != "${suite#trixie-backports}" ]; then
		in_root apt-cache madison "${kimage%:*}" |
			awk -F' [|] ' '$3 ~ / trixie-backports\// { print $2; exit }'
	else
		in_root apt-cache policy "$kimage" | sed -n 's/^ *Candidate: *//p'
	fi
}

# Say when a Release file we just accepted is past its Valid-Until date.
expired_note() {
	now=$(date -u +%s)
	for rel in "$root"/var/lib/apt/lists/*_InRelease "$root"/var/lib/apt/lists/*_Release; do
		[ -f "$rel" ] || continue
		until=$(sed -n 's/^Valid-Until: //p' "$rel" | head -n 1)
		[ -n "$until" ] || continue
		t=$(date -u -d "$until" +%s 2>/dev/null) || continue
		[ "$t" -lt "$now" ] &&
			say "note: $(basename "$rel") expired on $until; used anyway (Acquire::Check-Valid-Until=false)"
	done
	return 0
}

installed_kernel() {
	# shellcheck disable=SC2016 # a dpkg-query format, not a shell expansion
	in_root dpkg-query -W -f '${Version}' "$kimage" 2>/dev/null || true
}

want_stamp() {
	printf '%s|%s|%s\n' "$1" "$pkgs" "$kinclude"
}

build_env() {
	say "building the $suite environment in $root (a few minutes, ~1 GB; cached afterwards)"
	rm -rf "$dir/new"
	mkdir -p "$dir"
	set -- --variant=apt --architectures="$arches" --include="$(echo "$pkgs" | tr ' ' ','),$kinclude" \
		--aptopt="$aptopt"
	if [ "$suite" != "${suite#trixie-backports}" ]; then
		# shellcheck disable=SC2016 # expanded by mmdebstrap's hook shell
		set -- "$@" --setup-hook='sed -n "s/ trixie main/ trixie-backports main/p" "$1/etc/apt/sources.list" >"$1/etc/apt/sources.list.d/backports.list"'
	fi
	if ! mmdebstrap "$@" "$base" "$dir/new" </dev/null >"$dir/mmdebstrap.log" 2>&1; then
		tail -n 20 "$dir/mmdebstrap.log" >&2
		die "mmdebstrap failed; full log in $dir/mmdebstrap.log"
	fi
	[ "$suite" = "${suite%-arm64}" ] || arm64_headers "$dir/new" ||
		die "could not unpack the arm64 kernel's headers; see $dir/headers.log"
	rm -rf "$root"
	mv "$dir/new" "$root"
}

# arm64_headers ROOT: unpack the headers of ROOT's arm64 kernel, with the amd64 build of their
# kbuild tools (Multi-Arch: foreign), where the kernel's build link points.
arm64_headers() {
	kv=$(ls "$1/usr/lib/modules")
	say "unpacking the headers of $kv"
	cp /etc/resolv.conf "$1/etc/resolv.conf" 2>/dev/null || true
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare -m --propagation private sh -c 'mount -t proc proc "$1/proc" && shift && chroot "$@"' \
		sh "$1" "$1" sh -c 'set -e; rm -rf /tmp/h; mkdir /tmp/h; cd /tmp/h
		apt-get -q -o Acquire::Check-Valid-Until=false update
		apt-get -q -o Acquire::Check-Valid-Until=false download "linux-headers-$0-arm64:arm64" \
			"linux-headers-$0-common" "linux-kbuild-$0:amd64"
		for d in *.deb; do dpkg-deb -x "$d" /; done
		cd / && rm -rf /tmp/h
		test -e "/usr/lib/modules/$0-arm64/build/Makefile"' "${kv%-arm64}" \
		>"$dir/headers.log" 2>&1
}

# Ask the archive at most once an hour (CSF_ENV_RECHECK seconds): one run calls this often.
recent() {
	[ -f "$dir/checked" ] &&
		[ $(($(date +%s) - $(stat -c %Y "$dir/checked"))) -lt "${CSF_ENV_RECHECK:-3600}" ]
}

if [ ! -d "$root" ] || [ ! -f "$dir/stamp" ]; then
	build_env
elif [ "$(want_stamp "$(installed_kernel)")" != "$(cat "$dir/stamp")" ]; then
	say "the environment's package list changed: rebuilding"
	build_env
elif ! recent; then
	avail=$(archive_kernel)
	if [ -n "$avail" ]; then
		touch "$dir/checked"
		if [ "$(want_stamp "$avail")" != "$(cat "$dir/stamp")" ]; then
			say "kernel package $(installed_kernel) -> $avail: rebuilding"
			build_env
		fi
	fi
fi

if [ ! -f "$dir/stamp" ] || [ "$(want_stamp "$(installed_kernel)")" != "$(cat "$dir/stamp")" ]; then
	[ -n "$(installed_kernel)" ] || die "no kernel in $root; see $dir/mmdebstrap.log"
	want_stamp "$(installed_kernel)" >"$dir/stamp"
	# Reports expired Release files once for a fresh environment.
	[ -z "$(archive_kernel)" ] || touch "$dir/checked"
fi
# The debug suite's kernel is built, not installed: build it (once per input) and put it in.
[ "$suite" != debug ] || "$(dirname "$0")/debug-kernel.sh" "$root" >&2 ||
	die "could not build or install the debug kernel"
printf '%s\n' "$root"
