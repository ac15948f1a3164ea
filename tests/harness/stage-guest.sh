#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# stage-guest.sh ART MODDIR: gather what the test guest's initramfs holds into ART, from a tree
# where "make STATIC=1 all test-modules" has run (the current directory):
#   ART/init                 tests/harness/vm-inner.sh
#   ART/csf/tests.list       tests/list, which it runs from
#   ART/csf/bin/csf-demo     tests/harness/demo-guest.sh
#   ART/bin/busybox + links  the guest's shell and tools (busybox-static)
#   ART/csf/*.ko             the module and the harness self-test module
#   ART/csf/bin/             test programs, csfcat, the example (statically linked)
#   ART/lib*/                the C library and loader of dynamic test programs (t_lib)
#   ART/csf/kmods/           kernel modules the tests load (null_blk, msr), uncompressed, with order
# MODDIR is the guest kernel's /lib/modules/VERSION.
set -eu

art=${1:?usage: stage-guest.sh ART MODDIR}
moddir=${2:?usage: stage-guest.sh ART MODDIR}

busybox=$(command -v busybox || true)
[ -n "$busybox" ] || busybox=/bin/busybox
[ -x "$busybox" ] || { echo "stage-guest: busybox not found (install busybox-static)" >&2; exit 1; }
case $(file -b "$busybox" 2>/dev/null || echo static) in
*dynamically*) echo "stage-guest: $busybox is not static (install busybox-static)" >&2; exit 1 ;;
esac

rm -rf "$art"
mkdir -p "$art/bin" "$art/csf/bin" "$art/csf/kmods" "$art/proc" "$art/sys" "$art/dev" \
	"$art/tmp" "$art/mnt"
cp tests/harness/vm-inner.sh "$art/init"
cp tests/klog-patterns "$art/csf/klog-patterns"
cp tests/list "$art/csf/tests.list"
cp tests/harness/demo-guest.sh "$art/csf/bin/csf-demo"
cp "$busybox" "$art/bin/busybox"
# A busybox of another architecture (an arm64 guest's) does not run here: the guest's init links
# its applets itself. Its shell, which runs init, cannot wait for that.
ln -sf busybox "$art/bin/sh"
if applets=$("$busybox" --list 2>/dev/null); then
	for applet in $applets; do
		[ "$applet" = busybox ] || ln -sf busybox "$art/bin/$applet"
	done
fi

cp kmod/coarse_stat_fs.ko tests/harness/selftest/csf_selftest.ko "$art/csf/"
cp build/tests/* "$art/csf/bin/"
[ ! -x tools/csfcat ] || cp tools/csfcat "$art/csf/bin/"
[ ! -x build/eventloop ] || cp build/eventloop "$art/csf/bin/"

# Dynamic test programs (t_lib) need the loader and their libraries, at their own paths: ldd
# names them for this machine's programs; a cross build's (CROSS_COMPILE: an arm64 guest's)
# come from its compiler's C library, under the names its ELF headers ask for.
for f in "$art"/csf/bin/*; do
	if [ -n "${CROSS_COMPILE:-}" ]; then
		interp=$(readelf -l "$f" | sed -n 's/.*program interpreter: \(.*\)]$/\1/p')
		[ -n "$interp" ] || continue # static
		for so in "$(basename "$interp")" \
			$(readelf -d "$f" | sed -n 's/.*Shared library: \[\(.*\)\]$/\1/p'); do
			dst=/lib/$so
			[ "$so" != "$(basename "$interp")" ] || dst=$interp
			mkdir -p "$art$(dirname "$dst")"
			cp -L "$("${CROSS_COMPILE}gcc" -print-file-name="$so")" "$art$dst"
		done
		continue
	fi
	libs=$(ldd "$f" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\/.*ld-linux/ { print $1 }') ||
		continue
	for lib in $libs; do
		mkdir -p "$art$(dirname "$lib")"
		cp -L "$lib" "$art$lib"
	done
done

# Kernel modules with their dependencies, decompressed (busybox insmod reads plain .ko).
want="null_blk msr"
for m in $want; do
	deps=$(awk -v m="/$m.ko" 'index($1, m) { sub(":", "", $1); print; exit }' "$moddir/modules.dep")
	[ -n "$deps" ] || { echo "stage-guest: $m not in $moddir/modules.dep" >&2; continue; }
	# modules.dep lists "mod: dep1 dep2", dependencies first when loading in reverse order.
	for f in $(echo "$deps" | awk '{ for (i = NF; i >= 1; i--) print $i }'); do
		name=$(basename "$f")
		case $name in
		*.xz) xz -dc "$moddir/$f" >"$art/csf/kmods/${name%.xz}" ;;
		*.zst) zstd -qdc "$moddir/$f" >"$art/csf/kmods/${name%.zst}" ;;
		*) cp "$moddir/$f" "$art/csf/kmods/$name" ;;
		esac
		name=${name%.xz}
		name=${name%.zst}
		grep -qx "$name" "$art/csf/kmods/order" 2>/dev/null || echo "$name" >>"$art/csf/kmods/order"
	done
done
