#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# debug-kernel.sh ROOT: make sure ROOT, the debug suite's environment (suite-env.sh debug), holds
# the debug kernel: built from ROOT's linux-source package (Debian trixie's 6.12) with
# tinyconfig, then tests/debian/debug.config (KASAN, lockdep, UBSAN, kmemleak, fault injection,
# and what the guest needs), then olddefconfig. Installs, as a packaged kernel would be:
#   /boot/vmlinuz-KVER, /boot/config-KVER, /usr/lib/modules/KVER (null_blk, msr, kvm),
#   /usr/src/linux-headers-KVER (scripts/package/install-extmod-build), and the build link.
#
# The build lives in $CSF_CACHE/debug-kernel (default ~/.cache/coarse_stat_fs): the unpacked
# source, the object tree and what gets installed. It is rebuilt only when an input changes:
# the source package's version, the compiler's, debug.config, or RECIPE below. A config change
# rebuilds incrementally (kbuild recompiles what depends on the changed options). Each build's
# time and the machine's load during it go to build-time; the log to build.log.
set -eu

# Bump when the steps below change what gets built.
RECIPE=1

root=${1:?usage: debug-kernel.sh ROOT}
top=$(cd "$(dirname "$0")/../.." && pwd)
cache=${CSF_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/coarse_stat_fs}
dir=$cache/debug-kernel
frag=$top/tests/debian/debug.config

say() { printf '%s\n' "debug-kernel: $*" >&2; }
die() { say "error: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (chroot)"

# in_root CMD: run CMD in ROOT, with /proc (objtool reads it) and the cache at /csf-kernel, in a
# private mount namespace that takes both mounts away with it.
in_root() {
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare -m --propagation private sh -c \
		'mount -t proc proc "$1/proc" && mkdir -p "$1/csf-kernel" &&
		mount --bind "$2" "$1/csf-kernel" &&
		exec chroot "$1" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
			sh -c "set -e; cd /csf-kernel; $3"' sh "$root" "$dir" "$1"
}

# The timed build below runs this script again, to run one command in ROOT.
if [ -n "${CSF_DEBUG_KERNEL_IN_ROOT:-}" ]; then
	in_root "$CSF_DEBUG_KERNEL_IN_ROOT"
	exit
fi

# shellcheck disable=SC2016 # a dpkg-query format, not a shell expansion
srcver=$(chroot "$root" dpkg-query -W -f '${Version}' linux-source 2>/dev/null) ||
	die "no linux-source package in $root"
tarball=$(find "$root/usr/src" -maxdepth 1 -name 'linux-source-*.tar.xz' | head -n 1)
[ -n "$tarball" ] || die "no linux-source tarball in $root/usr/src"
gccver=$(chroot "$root" gcc -dumpfullversion)
key=$(printf '%s\n' "$RECIPE" "$srcver" "$gccver" "$(sha256sum <"$frag")" | sha256sum | cut -c1-16)

installed() {
	[ -f "$dir/kver" ] && [ -f "$root/boot/vmlinuz-$(cat "$dir/kver")" ] &&
		[ "$(cat "$root/boot/csf-debug-key" 2>/dev/null)" = "$key" ]
}

if [ "$(cat "$dir/built-key" 2>/dev/null)" = "$key" ] && installed; then
	exit 0
fi

mkdir -p "$dir"
if [ "$(cat "$dir/built-key" 2>/dev/null)" != "$key" ]; then
	# A new source (or compiler) starts from scratch; a new config reuses the objects.
	if [ "$(cat "$dir/src-version" 2>/dev/null)" != "$srcver|$gccver" ]; then
		say "unpacking $(basename "$tarball") $srcver into $dir/src"
		rm -rf "$dir/src" "$dir/obj" "$dir/built-key"
		mkdir -p "$dir/src"
		tar -C "$dir/src" --strip-components=1 -xf "$tarball"
		printf '%s\n' "$srcver|$gccver" >"$dir/src-version"
	fi
	cp "$frag" "$dir/debug.config"
	say "configuring: tinyconfig + tests/debian/debug.config"
	in_root 'cd src && make -s O=../obj tinyconfig >/dev/null &&
		scripts/kconfig/merge_config.sh -m -O ../obj ../obj/.config ../debug.config >/dev/null &&
		make -s O=../obj olddefconfig' >"$dir/config.log" 2>&1 ||
		{ tail -n 20 "$dir/config.log" >&2; die "configuring failed; see $dir/config.log"; }
	# Every line of the fragment must have survived: a dropped one is a missing dependency.
	missing=$(grep -E '^(CONFIG_|# CONFIG_)' "$frag" | while IFS= read -r line; do
		case $line in
		"# "*) sym=${line#\# }; sym=${sym%% *}
			grep -q "^$sym=" "$dir/obj/.config" && echo "$line" ;;
		*) grep -qxF "$line" "$dir/obj/.config" || echo "$line" ;;
		esac
	done)
	[ -z "$missing" ] || die "olddefconfig dropped (missing dependencies?): $(echo "$missing" | tr '\n' ' ')"

	jobs=$(nproc)
	say "building bzImage and modules with $jobs jobs (log: $dir/build.log); a cold build takes" \
		"10 (idle) to 30 (shared) minutes on 2 cores"
	t0=$(date +%s)
	load0=$(cut -d' ' -f1 /proc/loadavg)
	# Progress, and the machine's load while building (other work competes for the CPUs).
	: >"$dir/load.samples"
	(
		while sleep 60; do
			cut -d' ' -f1 /proc/loadavg >>"$dir/load.samples"
			say "... $(($(date +%s) - t0))s, $(grep -c '^  CC ' "$dir/build.log" || true) files compiled," \
				"load $(cut -d' ' -f1 /proc/loadavg)"
		done
	) &
	ticker=$!
	rc=0
	# time(1) counts the CPU time of the whole build (every process is waited for).
	CSF_DEBUG_KERNEL_IN_ROOT="cd src && make O=../obj -j$jobs bzImage modules" \
		/usr/bin/time -f '%e %U %S' -o "$dir/time.out" "$0" "$root" \
		>"$dir/build.log" 2>&1 || rc=$?
	kill "$ticker" 2>/dev/null || true
	wait "$ticker" 2>/dev/null || true
	if [ "$rc" != 0 ]; then
		grep -E 'error|Error' "$dir/build.log" | head -n 20 >&2
		die "the kernel build failed; see $dir/build.log"
	fi
	read -r wall usr sys <"$dir/time.out"
	avg=$(awk '{ s += $1; n++ } END { if (n) printf "%.2f", s / n; else print "n/a" }' \
		"$dir/load.samples")
	printf 'wall %ss, cpu user %ss sys %ss, %s jobs on %s CPUs, load %s at start, %s on average\n' \
		"$wall" "$usr" "$sys" "$jobs" "$(nproc)" "$load0" "$avg" | tee "$dir/build-time" >&2

	kver=$(cat "$dir/obj/include/config/kernel.release")
	say "staging $kver for installation"
	rm -rf "$dir/install"
	in_root "cd obj && make -s -C ../src O=../obj INSTALL_MOD_PATH=/csf-kernel/install/usr \
		modules_install >/dev/null &&
		srctree=/csf-kernel/src SRCARCH=x86 CC=gcc HOSTCC=gcc \
			sh ../src/scripts/package/install-extmod-build \
			/csf-kernel/install/usr/src/linux-headers-$kver &&
		mkdir -p ../install/boot &&
		cp arch/x86/boot/bzImage ../install/boot/vmlinuz-$kver &&
		cp .config ../install/boot/config-$kver && cp System.map ../install/boot/System.map-$kver &&
		ln -sfn /usr/src/linux-headers-$kver ../install/usr/lib/modules/$kver/build" \
		>"$dir/install.log" 2>&1 ||
		{ tail -n 20 "$dir/install.log" >&2; die "staging failed; see $dir/install.log"; }
	printf '%s\n' "$kver" >"$dir/kver"
	printf '%s\n' "$key" >"$dir/built-key"
fi

kver=$(cat "$dir/kver")
say "installing $kver into $root"
# One kernel in the environment: in-env.sh and run.sh take the only one there.
rm -rf "${root:?}"/usr/lib/modules/* "${root:?}"/usr/src/linux-headers-* "${root:?}"/boot/*
cp -a "$dir/install/." "$root/"
printf '%s\n' "$key" >"$root/boot/csf-debug-key"
