#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# systemd-stage.sh ART: run inside a suite's environment (tests/debian/run.sh), from a tree where
# "make STATIC=1 all" has run: put in ART what the services test's boot adds to the guest
# (tests/e2e/t_services.c, boot=csf.systemd=1 in tests/list):
#   - the suite's own systemd, unpacked from its Debian package with the libraries it links;
#     tests/harness/vm-inner.sh execs it as PID 1 when the command line says csf.systemd=1
#   - csf-guest.target, the default target, and csf-guest.service, which runs vm-inner.sh
#     again, under systemd, to run the tests and power off
#   - csfcat, its units and /etc/default/csfcat, as "make install-user PREFIX=/usr" installs them
# The packages are downloaded once into the environment's /var/cache/csf-systemd (the
# environment is cached) and unpacked there, not installed.
set -eu

art=${1:?usage: systemd-stage.sh ART}
cache=/var/cache/csf-systemd
mkdir -p "$cache"

# systemd, its private library where that is a package of its own, and the libraries they link
# that the environment lacks (bookworm's has no systemd, and so neither iptables' nor
# cryptsetup's libraries).
if ! ls "$cache"/systemd_*.deb >/dev/null 2>&1; then
	pkgs=systemd
	! apt-cache show libsystemd-shared >/dev/null 2>&1 || pkgs="$pkgs libsystemd-shared"
	for p in $(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
		--no-breaks --no-replaces --no-enhances systemd | awk '/^lib/' | sort -u); do
		case " $pkgs " in *" $p "*) continue ;; esac
		dpkg -s "$p" >/dev/null 2>&1 || pkgs="$pkgs $p"
	done
	echo "systemd-stage: downloading $pkgs"
	# shellcheck disable=SC2086 # package names, one word each
	(cd "$cache" && { apt-get download -q $pkgs || { apt-get update -q && apt-get download -q $pkgs; }; }) ||
		{ echo "systemd-stage: cannot download $pkgs" >&2; exit 1; }
fi
x=$cache/x
rm -rf "$x"
for d in "$cache"/*.deb; do
	dpkg-deb -x "$d" "$x"
done
# Documentation and the like: the guest needs none of it.
rm -rf "${x:?}/usr/share"

rm -rf "$art"
mkdir -p "$art"
cp -a "$x/." "$art/"
# The program PID 1 becomes: /lib/systemd/systemd on bookworm, /usr/lib/systemd/systemd after.
for s in /usr/lib/systemd/systemd /lib/systemd/systemd; do
	[ ! -x "$art$s" ] || ln -sf "$s" "$art/csf-systemd"
done
[ -L "$art/csf-systemd" ] || { echo "systemd-stage: no systemd binary in the package" >&2; exit 1; }

# The libraries of every program in the packages, at their own paths, as stage-guest.sh does;
# those the packages hold first.
libpath=$(find "$x" -name '*.so*' -printf '%h\n' | sort -u | tr '\n' : | sed 's/:$//')
missing=
for f in $(find "$x" -type f -perm -u+x) $(find "$x" -type f -name '*.so*'); do
	out=$(LD_LIBRARY_PATH=$libpath ldd "$f" 2>/dev/null) || continue
	missing="$missing$(echo "$out" | awk '/not found/ { printf " %s", $1 }')"
	for lib in $(echo "$out" |
		awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\/.*ld-linux/ { print $1 }'); do
		case $lib in "$x"/*) continue ;; esac
		[ -e "$art$lib" ] && continue
		mkdir -p "$art$(dirname "$lib")"
		cp -L "$lib" "$art$lib"
	done
done
if [ -n "$missing" ]; then
	echo "systemd-stage: libraries not found: $(echo "$missing" | tr ' ' '\n' | sort -u | xargs)" >&2
	exit 1
fi

# Not a first boot (systemd-firstboot would ask on the console), and an identity of its own.
mkdir -p "$art/etc/systemd/system"
od -An -N16 -tx1 /dev/urandom | tr -d ' \n' >"$art/etc/machine-id"
echo >>"$art/etc/machine-id"
cat >"$art/etc/systemd/system/csf-guest.target" <<'EOF'
[Unit]
Description=coarse_stat_fs test guest
Requires=basic.target
Wants=csf-guest.service
After=basic.target
AllowIsolate=yes
EOF
cat >"$art/etc/systemd/system/csf-guest.service" <<'EOF'
[Unit]
Description=coarse_stat_fs test guest: the tests (tests/harness/vm-inner.sh), then power off
After=basic.target systemd-journald.service

[Service]
Type=exec
ExecStart=/init
EOF
ln -sf csf-guest.target "$art/etc/systemd/system/default.target"
# The guest has neither ldconfig nor /lib/modules: the runner loads the modules. Its mount units
# run /usr/bin/mount, which busybox's is.
for u in ldconfig.service systemd-modules-load.service; do
	ln -sf /dev/null "$art/etc/systemd/system/$u"
done
mkdir -p "$art/usr/bin"
ln -sf /bin/busybox "$art/usr/bin/mount"
ln -sf /bin/busybox "$art/usr/bin/umount"

# csfcat as make install-user installs it. The guest's runner loads the module itself, as in
# every boot: no modules-load.d file, which systemd-modules-load would try.
make -s STATIC=1 install-user DESTDIR="$art" PREFIX=/usr
rm -rf "$art/usr/lib/modules-load.d" "$art/usr/include" "${art:?}/usr/share"
for d in "$cache"/*.deb; do
	echo "systemd-stage: staged from ${d##*/}"
done
