#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh SUITE [TEST...]: build the module and the tests with a Debian suite's own compiler and
# kernel headers, boot that suite's kernel in QEMU and run the tests there (all by default; the
# names are those of tests/harness/vm-inner.sh).
#
#   SUITE  bookworm (6.1), trixie (6.12), trixie-rt (6.12 PREEMPT_RT), trixie-backports (the
#          newest Debian kernel), sid, trixie-arm64 (trixie's 6.12 for arm64, cross-built and
#          emulated: docs/arm64.md), trixie-backports-arm64 (the newest for arm64), or debug
#          (trixie's 6.12 built with KASAN, lockdep, UBSAN, kmemleak and fault injection by
#          debug-kernel.sh; it also fuzzes and soaks, CSF_FUZZ and CSF_SOAK seconds, 60 each by
#          default, churns CSF_CHURN=10000 threads rather than 2000, and its guest gets
#          VM_MEM=2048)
#
# Prints one line per test and a final "RESULT <failures>"; exits non-zero on any failure.
# Logs: build/debian/SUITE/{build,console,results}.log. The suite's environment is cached under
# $CSF_CACHE (default ~/.cache/coarse_stat_fs); see suite-env.sh. VM_* settings:
# tests/harness/guest.sh.
set -euo pipefail

suite=${1:?usage: run.sh SUITE [TEST...]  (SUITE: bookworm, trixie, trixie-rt, trixie-backports, trixie-arm64, trixie-backports-arm64, sid, debug)}
shift
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/debian/$suite

"$top/tests/debian/deps.sh" host
if [ "$(id -u)" != 0 ]; then
	echo "run[$suite]: mmdebstrap and chroot need root: running through sudo"
	exec sudo --preserve-env=CSF_CACHE,CSF_HOST_TESTS,CSF_FUZZ,CSF_SOAK,CSF_SEED,CSF_CHURN \
		--preserve-env=FPU_SEED_PLANT,CSF_DEBS,CSF_REUSE_BUILD,CSF_E2E_SUITES,CSF_SERVICES_SUITES \
		--preserve-env=VM_TIMEOUT,VM_DEBUG,VM_ACCEL \
		--preserve-env=VM_SMP,VM_MEM,VM_TCG_THREAD,VM_APPEND,VM_CPU "$0" "$suite" "$@"
fi

say() { echo "run[$suite]: $*"; }

# The debug kernel: KASAN's shadow and quarantine want memory, and everything runs slower. So
# slow under TCG that the boot's check of the IO-APIC timer fails and panics (KVM guests skip
# that check by themselves): no_timer_check. And too slow for the tests' checks of how long
# things took: csf.timing=loose reports them without counting them (CHECK_TIMING in t.h).
if [ "$suite" = debug ]; then
	export CSF_FUZZ=${CSF_FUZZ-60} CSF_SOAK=${CSF_SOAK-60} CSF_CHURN=${CSF_CHURN:-10000}
	export VM_MEM=${VM_MEM:-2048}
	export VM_APPEND="no_timer_check csf.timing=loose${VM_APPEND:+ $VM_APPEND}"
	export VM_TIMEOUT=${VM_TIMEOUT:-$((2400 + ${CSF_FUZZ:-0} + ${CSF_SOAK:-0}))}
elif [ -n "${CSF_FUZZ:-}${CSF_SOAK:-}" ]; then
	export VM_TIMEOUT=${VM_TIMEOUT:-$((600 + ${CSF_FUZZ:-0} + ${CSF_SOAK:-0}))}
fi

mkdir -p "$out"
root=$("$top/tests/debian/suite-env.sh" "$suite")
# One run at a time per environment (env-lock.sh).
# shellcheck source=tests/debian/env-lock.sh
. "$top/tests/debian/env-lock.sh"
env_lock "$root" "$suite"
kver=$(ls "$root/usr/lib/modules")
# The guest's architecture (its uname -m, for tests/list's arch=), and how to build for it: an
# arm64 kernel's suite cross-compiles the module and the programs (suite-env.sh).
guest_arch=x86_64
cross=
cc=gcc
if grep -q '^CONFIG_ARM64=y' "$root/boot/config-$kver"; then
	guest_arch=aarch64
	cross="ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-"
	cc=aarch64-linux-gnu-gcc
fi
# The end-to-end test's Prometheus and node_exporter (tests/e2e/t_e2e.c), from these suites'
# own packages: the newest kernel and the current stable one.
stage_e2e=true
case " ${CSF_E2E_SUITES-trixie trixie-backports} " in
*" $suite "*) stage_e2e=tests/debian/e2e-stage.sh ;;
esac
# The suite's bpftrace, for the slice watch's benchmark to time next to (tests/bench/bench.c),
# when a run names it: LLVM and clang make it large.
stage_bpftrace=true
for t in "$@"; do
	case ${t%%:*} in
	bench | bench-slices) stage_bpftrace=tests/debian/bpftrace-stage.sh ;;
	esac
done
# Not for an arm64 guest: the environment's packages are amd64's.
[ "$guest_arch" = x86_64 ] || stage_bpftrace=true
# The services test's systemd (tests/e2e/t_services.c), from these suites' own packages.
stage_services=true
case " ${CSF_SERVICES_SUITES-bookworm trixie} " in
*" $suite "*) stage_services=tests/debian/systemd-stage.sh ;;
esac
if [ "${CSF_REUSE_BUILD:-0}" = 1 ] && [ -x "$root/csf/art/init" ]; then
	# The harness self-test's later cases: the tree the first one built is still there.
	say "reusing the build in $root/csf (CSF_REUSE_BUILD=1)"
else
	say "building for $kver (log: $out/build.log)"
	# shellcheck disable=SC2016 # $KVER is expanded inside the environment
	if ! "$top/tests/debian/in-env.sh" --fresh "$suite" \
		'echo "kernel $KVER, $('"$cc"' --version | head -n 1)" &&
		make -j"$(nproc)" STATIC=1 KDIR=/lib/modules/$KVER/build WERROR=1 '"$cross"' \
			all test-modules &&
		'"$cross"' tests/harness/stage-guest.sh /csf/art /lib/modules/$KVER && '"$stage_e2e"' /csf/e2e-art &&
		'"$stage_services"' /csf/services-art &&
		{ '"$stage_bpftrace"' /csf/bpftrace-art ||
		echo "bpftrace-stage.sh failed: the benchmark skips bpftrace"; }' \
		>"$out/build.log" 2>&1; then
		tail -n 30 "$out/build.log"
		say "build failed; full log in $out/build.log"
		echo "RESULT 1"
		exit 1
	fi
	say "built with $(sed -n 's/^kernel [^,]*, //p' "$out/build.log" | head -n 1)"
fi

# Installing, from the built tree in the environment: make install into a scratch root, and a
# real dkms add/build/install whose module the guest loads (test "dkms"), side by side; then the
# Debian packages of make deb, installed and purged with apt-get, whose DKMS-built module and
# csfcat the guest runs (test "deb"); then csfcat fpu-report against the XSAVE latency series'
# own script (fpu-seed). CSF_HOST_TESTS=0 leaves them out (the harness self-test does), a list
# (install, dkms-build, deb-install, fpu-seed; commas or spaces) runs only those. A host test
# that fails, or exits without saying, counts in RESULT, and the guest tests still run: nothing
# here may end the run (set -e).
# By default, each where it adds something: the packages on the suites users install them on
# (the rt flavour's DKMS build is dkms-build's), nothing on the debug kernel (trixie's
# userland, checked in trixie's run; its kernel is what that suite is for).
case $suite in
# The arm64 kernel's suite: its packages and DKMS build are the amd64 ones' (same sources), and
# the seed's script runs on the host: nothing here adds to what x86's suites check.
debug | *-arm64) default_host="" ;;
trixie-rt) default_host="install dkms-build fpu-seed" ;;
*) default_host="install dkms-build deb-install fpu-seed" ;;
esac
case ${CSF_HOST_TESTS:-1} in
1) host_tests=$default_host ;;
0) host_tests="" ;;
*) host_tests=${CSF_HOST_TESTS//,/ } ;;
esac
want() { case " $host_tests " in *" $1 "*) return 0 ;; esac; return 1; }
host_fails=0
if [ -n "$host_tests" ]; then
	say "checking on the host: $host_tests (log: $out/host-tests.log)"
	log=$out/host-tests.log
	: >"$log"
	# shellcheck disable=SC2016 # $KVER is expanded inside the environment
	install='tests/install/install-test.sh /lib/modules/$KVER/build'
	# shellcheck disable=SC2016
	dkms='tests/install/dkms-test.sh $KVER /csf/art'
	cmd=
	if want install && want dkms-build; then
		cmd="$install >/tmp/install.log 2>&1 & $dkms; wait; cat /tmp/install.log"
	elif want install; then
		cmd=$install
	elif want dkms-build; then
		cmd=$dkms
	fi
	# After the DKMS test, which removes what it added: both are coarse_stat_fs 0.1.0 to DKMS.
	# The packages: CSF_DEBS when make check-all built them once for all suites.
	debs=${CSF_DEBS:-$out/deb}
	if want deb-install && [ -z "${CSF_DEBS:-}" ]; then
		say "building the Debian packages (log: $out/deb/build.log)"
		CSF_DEB_OUT="$debs" CSF_DEB_LINTIAN=0 "$top/scripts/deb.sh" >>"$log" 2>&1 ||
			echo "FAIL deb-install (make deb failed; see $debs/build.log)" >>"$log"
	fi
	if want deb-install; then
		if ls "$debs"/*.deb >/dev/null 2>&1; then
			rm -rf "$root/csf/debs"
			mkdir -p "$root/csf/debs"
			cp "$debs"/*.deb "$root/csf/debs/"
			# shellcheck disable=SC2016
			cmd="${cmd:+$cmd; }"'tests/install/deb-test.sh $KVER /csf/art /csf/debs'
		elif ! grep -q '^FAIL deb-install' "$log"; then
			echo "FAIL deb-install (no packages in $debs)" >>"$log"
		fi
	fi
	if [ -n "$cmd" ]; then
		"$top/tests/debian/in-env.sh" "$suite" "$cmd" >>"$log" 2>&1 ||
			echo "# install and DKMS: in-env.sh exited $?" >>"$log"
	fi
	# On the host: the series' script needs bash, sqlite3 and bc; csfcat is static.
	if want fpu-seed; then
		"$top/tests/user/fpu-seed-test.sh" "$root/csf/src/tools/csfcat" >>"$log" 2>&1 ||
			echo "# fpu-seed-test.sh exited $?" >>"$log"
	fi
	for t in $host_tests; do
		if ! grep -Eq "^(PASS|FAIL) $t( |$)" "$log"; then
			echo "FAIL $t (did not report; see $log)" >>"$log"
		fi
	done
	grep -E '^(PASS|FAIL|#)' "$log" || true
	host_fails=$(grep -c '^FAIL' "$log" || true)
fi

# Tests with a boot of their own (boot= in tests/list), when named, or all of the default ones
# in a run given no names: the TSC test steps a CPU's TSC back, which the kernel survives only
# when it keeps time with another clocksource (tsc=unstable); the isolated-CPU test needs CPU 1
# isolated (isolcpus=1 nohz_full=1).
boot_args() { # NAME: its boot= option, commas as blanks; nothing for a test without one
	awk -v n="$1" '!/^#/ && $1 == n { for (i = 4; i <= NF; i++) if ($i ~ /^boot=/) {
		s = substr($i, 6); gsub(",", " ", s); print s } }' "$top/tests/list"
}
alone=()
tests=()
for t in "$@"; do
	if [ -n "$(boot_args "${t%%:*}")" ]; then
		alone+=("$t")
	else
		tests+=("$t")
	fi
done
[ $# -gt 0 ] || mapfile -t alone < <(awk -v a="arch=$guest_arch" '!/^#/ && $3 == "default" &&
	/boot=/ { for (i = 4; i <= NF; i++) if ($i ~ /^arch=/ && $i != a) next; print $1 }' \
	"$top/tests/list")
# staged TEST: whether what TEST's boot needs was staged for this suite: the end-to-end test's
# programs (CSF_E2E_SUITES), the services test's systemd (CSF_SERVICES_SUITES); others need none.
staged() {
	case ${1%%:*} in
	e2e) [ -x "$root/csf/e2e-art/csf/e2e/prometheus" ] ;;
	services) [ -L "$root/csf/services-art/csf-systemd" ] ;;
	esac
}
# By default, those boots only where they are staged.
if [ $# = 0 ]; then
	for i in "${!alone[@]}"; do
		staged "${alone[$i]}" || unset "alone[$i]"
	done
fi

rc=0
# The boot that runs the slice watch's benchmark also holds what bpftrace-stage.sh staged (a
# bpftrace it cannot find, it skips).
bpftrace_art=
[ "$stage_bpftrace" = true ] || [ ! -d "$root/csf/bpftrace-art" ] ||
	bpftrace_art=$root/csf/bpftrace-art
if [ $# = 0 ] || [ "${#tests[@]}" -gt 0 ]; then
	CSF_HOST_FAILS=$host_fails VM_EXTRA_ART=$bpftrace_art "$top/tests/harness/guest.sh" \
		"$root/boot/vmlinuz-$kver" "$root/boot/config-$kver" "$root/csf/art" "$out" \
		"${tests[@]}" || rc=1
	host_fails=0
fi
# boot_alone TEST APPEND WHY: boot once more, with APPEND on the command line, for TEST alone;
# the e2e test's boot also holds what e2e-stage.sh staged (only that boot: Prometheus is large),
# the services test's what systemd-stage.sh staged.
boot_alone() {
	say "booting again with $2 for $3 (log: $out/$1/console.log)"
	local extra=
	case ${1%%:*} in
	e2e) extra=$root/csf/e2e-art ;;
	services) extra=$root/csf/services-art ;;
	esac
	CSF_HOST_FAILS=$host_fails VM_EXTRA_ART=$extra VM_APPEND="$2${VM_APPEND:+ $VM_APPEND}" \
		"$top/tests/harness/guest.sh" "$root/boot/vmlinuz-$kver" "$root/boot/config-$kver" \
		"$root/csf/art" "$out/$1" "$1" || rc=1
	host_fails=0
}
for t in "${alone[@]}"; do
	# Named, but not staged for this suite: say so rather than boot without its programs.
	if ! staged "$t"; then
		case ${t%%:*} in
		e2e) echo "SKIP e2e (its Prometheus is staged only for the suites in" \
			"CSF_E2E_SUITES, \"${CSF_E2E_SUITES-trixie trixie-backports}\"; not $suite)" ;;
		services) echo "SKIP services (its systemd is staged only for the suites in" \
			"CSF_SERVICES_SUITES, \"${CSF_SERVICES_SUITES-bookworm trixie}\"; not $suite)" ;;
		esac
		continue
	fi
	boot_alone "$t" "$(boot_args "${t%%:*}")" "the ${t%%:*} test"
done
exit "$rc"
