#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# lib-check-arm64.sh: the arm64 half of "make lib-check", on an x86-64 (or any) Debian host:
#   lib-arm64-CC-STD       the library compiles for arm64 with Debian's cross compilers, as C11
#                          and C++, -Wall -Wextra -Werror
#   lib-arm64-isb-CC-OPT   in the object's code for csf_thread_snap(), every mrs of cntvct_el0
#                          comes right after an isb and before the vDSO's fake dependency (eor,
#                          add sp, ldr xzr): a read the CPU could run early or late fails
#   lib-arm64-host-TEST    the host tests (tests/list, "host"; not btf_host, the module's BTF
#                          reader under ASan) built static for arm64 and run under qemu-aarch64,
#                          with csfcat built the same way first in PATH
# Prints "PASS name" or "FAIL name (why)" per check; fails if any failed. Needs
# gcc-aarch64-linux-gnu, g++-aarch64-linux-gnu, libc6-dev-arm64-cross,
# binutils-aarch64-linux-gnu, clang and qemu-user-static (Debian's names).
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
cross=aarch64-linux-gnu
out=build/$cross
fails=0

pass() { echo "PASS $1"; }
fail() {
	echo "FAIL $1 ($2)"
	fails=1
}

# "command:package" as tests/debian/deps.sh names them: a missing one fails the checks that need it.
have() {
	command -v "$1" >/dev/null 2>&1
}
missing() {
	echo "no $1: apt-get install $2"
}

mkdir -p "$out"

# Compile: C11 and C++, each warning a failure.
for cl in gcc:c11 g++:c++11 g++:c++17 clang:c11; do
	cc=${cl%%:*}
	std=${cl#*:}
	lang=c
	case $std in c++*) lang=c++ ;; esac
	case $cc in
	clang) cmd="clang --target=$cross" pkg=clang ;;
	gcc) cmd=$cross-gcc pkg="gcc-$cross libc6-dev-arm64-cross" ;;
	*) cmd=$cross-g++ pkg="g++-$cross libc6-dev-arm64-cross" ;;
	esac
	if ! have "${cmd%% *}"; then
		fail "lib-arm64-$cc-$std" "$(missing "${cmd%% *}" "$pkg")"
	elif $cmd -x $lang -std="$std" -Wall -Wextra -Werror -fsyntax-only tests/user/lib_compile.c; then
		pass "lib-arm64-$cc-$std"
	else
		fail "lib-arm64-$cc-$std" "does not compile"
	fi
done

# The counter read's ordering, in the code csf_thread_snap() compiles to (at -O0 its own
# functions; at -O2 all inlined into csf_check_snap). awk prints what is wrong around a read.
# shellcheck disable=SC2016 # an awk program
check_reads='
	{ ins[NR] = $0 }
	END {
		for (i = 1; i <= NR; i++) {
			if (ins[i] !~ /mrs[ \t]+x[0-9]+, cntvct_el0/)
				continue
			n++
			if (ins[i - 1] !~ /isb/)
				print "no isb before: " ins[i - 1]
			else if (ins[i + 1] !~ /eor/ || ins[i + 2] !~ /add[ \t]+x[0-9]+, sp/ ||
				 ins[i + 3] !~ /ldr[ \t]+xzr/)
				print "no fake dependency after: " ins[i + 1]
		}
		if (!n)
			print "no mrs of cntvct_el0 at all"
	}'
if ! have $cross-objdump; then
	fail lib-arm64-isb "$(missing $cross-objdump binutils-$cross)"
else
	for co in gcc:-O0 gcc:-O2 clang:-O2; do
		cc=${co%%:*}
		o=${co#*:}
		obj=$out/lib-check-snap$o-$cc.o
		case $cc in
		clang) cmd="clang --target=$cross" ;;
		*) cmd=$cross-gcc ;;
		esac
		have "${cmd%% *}" || continue # its compile check failed above
		if ! printf '%s\n' '#include "../lib/coarse_stat_fs.h"' \
			'int csf_check_snap(struct csf_snap *s);' \
			'int csf_check_snap(struct csf_snap *s) { return csf_thread_snap(s); }' |
			$cmd "$o" -I"$top/tests" -x c -c -o "$obj" -; then
			fail "lib-arm64-isb-$cc$o" "does not compile"
			continue
		fi
		# -O0: the read is csf_rdtsc()'s own; -O2: inlined into csf_check_snap.
		sym=csf_check_snap
		[ "$o" = -O0 ] && sym=csf_rdtsc
		why=$($cross-objdump -d --no-show-raw-insn --disassemble=$sym "$obj" |
			grep -E '^ +[0-9a-f]+:' | awk "$check_reads" | head -n 1)
		if [ -n "$why" ]; then
			fail "lib-arm64-isb-$cc$o" "$sym: $why"
		else
			pass "lib-arm64-isb-$cc$o"
		fi
	done
fi

# The host tests under qemu-user: the same awk as tests/harness/host-check.sh.
tests=$(awk '!/^#/ && NF >= 3 {
	h = $3 == "host"; for (i = 4; i <= NF; i++) h = h || $i == "host"
	if (h && $2 != "btf_host") print $2 }' tests/list)
qemu=""
for q in qemu-aarch64-static qemu-aarch64; do
	have $q && qemu=$q && break
done
if [ -z "$qemu" ] || ! have $cross-gcc; then
	for t in $tests; do
		fail "lib-arm64-host-$t" "$(missing "${qemu:-qemu-aarch64-static}" \
			"qemu-user-static gcc-$cross libc6-dev-arm64-cross")"
	done
	exit 1
fi
targets="$out/csfcat"
for t in $tests; do
	targets="$targets $out/tests/$t"
done
# shellcheck disable=SC2086 # a list of make targets
if ! make --no-print-directory -j"$(nproc)" CROSS_COMPILE=$cross- B="$out" STATIC=1 $targets \
	>"$out/lib-check-build.log" 2>&1; then
	cat "$out/lib-check-build.log"
	for t in $tests; do
		fail "lib-arm64-host-$t" "does not build"
	done
	exit 1
fi
# csfcat, as the tests run it (a shell runs "csfcat ..."), through qemu-user too.
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
printf '#!/bin/sh\nexec %s %s "$@"\n' "$qemu" "$top/$out/csfcat" >"$bin/csfcat"
chmod +x "$bin/csfcat"
for t in $tests; do
	log=$out/lib-check-$t.log
	if PATH="$bin:$PATH" CSF_FIXTURES="$top/tests/fixtures" timeout 120 \
		"$qemu" "$out/tests/$t" >"$log" 2>&1; then
		pass "lib-arm64-host-$t"
	else
		grep -E '^(not ok|#   FAIL)' "$log" | head -n 20
		fail "lib-arm64-host-$t" "log: $log"
	fi
done
exit $fails
