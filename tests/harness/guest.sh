#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# guest.sh KERNEL CONFIG ART OUT [TEST...]: boot KERNEL in QEMU with ART (see stage-guest.sh)
# as its initramfs, run the tests (default: all, as tests/harness/vm-inner.sh lists them), print one
# line per test as it finishes and a final "RESULT <failures>". Exits non-zero when anything failed.
#
# A run fails on a failed test, on any kernel warning, oops, BUG, KFENCE or hung-task report in
# the console log, when the guest dies before it reports, and when it runs past VM_TIMEOUT.
#
# Environment:
#   VM_TIMEOUT  seconds before the guest is killed (default 600)
#   VM_DEBUG    1 (default): slub_debug, init_on_free and KFENCE; 0 for benchmarks
#   VM_ACCEL    auto (default: KVM when /dev/kvm boots a kernel, else TCG), kvm or tcg
#   VM_SMP, VM_MEM  vCPUs (default 2) and MiB (default 1024)
#   VM_TCG_THREAD   single (default) or multi: TCG's threading, without KVM
#   VM_APPEND   more kernel command line (tests/debian/run.sh's TSC boot: tsc=unstable)
#   VM_CPU      QEMU's -cpu under TCG (default max)
#   VM_EXTRA_ART  a second directory whose files join ART's in the guest (the e2e test's programs)
#   CSF_FUZZ, CSF_SOAK  seconds of fuzzing (t_fuzz) and of soak (t_soak) after the default tests
#   CSF_SEED    the seed the fuzzer replays (see t_fuzz.c)
#   CSF_CHURN   threads t_churn registers and ends (default 2000)
set -euo pipefail

kernel=${1:?usage: guest.sh KERNEL CONFIG ART OUT [TEST...]}
config=${2:?}
art=${3:?}
out=${4:?}
shift 4
tests=("$@")

VM_TIMEOUT=${VM_TIMEOUT:-600}
VM_DEBUG=${VM_DEBUG:-1}
VM_ACCEL=${VM_ACCEL:-auto}
VM_SMP=${VM_SMP:-2}
VM_MEM=${VM_MEM:-1024}

# Kernel messages that fail a run (tests/klog-patterns, which the guest's own checks read too);
# the second list even between the noise markers of tests/harness/vm-inner.sh.
patterns=$(cd "$(dirname "$0")/.." && pwd)/klog-patterns
klog() { # LIST: the list's patterns joined with "|"
	awk -v l="$1" '$1 == l { sub(/^[^ ]+ /, ""); p = p (p == "" ? "" : "|") $0 }
		END { print p }' "$patterns"
}
kernel_bad=$(klog bad)
kernel_fatal=$(klog fatal)
if [ -z "$kernel_bad" ] || [ -z "$kernel_fatal" ]; then
	echo "guest: no kernel-log patterns in $patterns" >&2
	exit 2
fi

mkdir -p "$out"
console=$out/console.log
results=$out/results.log
rm -f "$console" "$results"

# The kernel's architecture, from its configuration: x86-64, or arm64 on QEMU's virt machine
# with a GICv3 (the interrupt controller arm64 servers have), whose one UART is the console;
# the results go through a virtio console instead of a second UART.
arch=x86_64
grep -q '^CONFIG_ARM64=y' "$config" && arch=aarch64
if [ "$arch" = aarch64 ]; then
	qemu=(qemu-system-aarch64 -M "virt,gic-version=3")
	tty=ttyAMA0
else
	qemu=(qemu-system-x86_64)
	tty=ttyS0
fi
qemu+=(-nodefaults -no-user-config -display none -no-reboot -m "$VM_MEM" -smp "$VM_SMP"
	-kernel "$kernel")

# KVM only if it really boots a kernel here: /dev/kvm can exist and still fail (nested setups).
kvm_works() {
	[ "$arch" = "$(uname -m)" ] && [ -w /dev/kvm ] || return 1
	# In a subshell that outlives QEMU, so that a crash of QEMU is not reported here.
	(timeout 20 "${qemu[@]}" -accel kvm -cpu host -serial "file:$out/kvm-probe.log" \
		-append "console=$tty panic=-1" >/dev/null 2>&1 || true) 2>/dev/null
	grep -q "Linux version" "$out/kvm-probe.log" 2>/dev/null
}

case $VM_ACCEL in
auto) if kvm_works; then accel=kvm; else accel=tcg; fi ;;
kvm | tcg) accel=$VM_ACCEL ;;
*) echo "guest: VM_ACCEL must be auto, kvm or tcg" >&2; exit 2 ;;
esac
if [ "$accel" = kvm ]; then
	qemu+=(-accel kvm -cpu host)
else
	accel="tcg ${VM_TCG_THREAD:-single}-threaded"
	# One host thread for all vCPUs: multi-threaded TCG (QEMU 7.2) can run a stale int3 after
	# the kernel patches code on another vCPU, and the guest oopses (seen at boot, once in ~40).
	qemu+=(-accel "tcg,thread=${VM_TCG_THREAD:-single}" -cpu "${VM_CPU:-max}")
fi

cmdline="console=$tty,115200 rdinit=/init loglevel=5 printk.time=1 log_buf_len=8M"
[ "$arch" = aarch64 ] || cmdline+=" tsc=reliable"
cmdline+=" panic=-1 oops=panic panic_on_warn=1${VM_APPEND:+ $VM_APPEND}"
if [ "$VM_DEBUG" = 1 ]; then
	cmdline+=" slub_debug=FZPU init_on_free=1"
	grep -q '^CONFIG_KFENCE=y' "$config" && cmdline+=" kfence.sample_interval=10"
fi
cmdline+="${CSF_FUZZ:+ csf.fuzz=$CSF_FUZZ}${CSF_SOAK:+ csf.soak=$CSF_SOAK}${CSF_SEED:+ csf.seed=$CSF_SEED}"
cmdline+="${CSF_CHURN:+ csf.churn=$CSF_CHURN}"
if [ "${#tests[@]}" -gt 0 ]; then
	list=${tests[*]}
	cmdline+=" csf.tests=${list// /,}" # none: the guest runs its default list
fi

(cd "$art" && find . | LC_ALL=C sort | cpio --quiet -o -H newc) >"$out/initramfs.cpio"
# The kernel unpacks concatenated archives in turn: VM_EXTRA_ART adds its files to this boot only.
if [ -n "${VM_EXTRA_ART:-}" ]; then
	(cd "$VM_EXTRA_ART" && find . | LC_ALL=C sort | cpio --quiet -o -H newc) \
		>>"$out/initramfs.cpio"
fi

echo "guest: booting $(basename "$kernel") ($accel, $VM_SMP vCPUs, VM_DEBUG=$VM_DEBUG," \
	"timeout ${VM_TIMEOUT}s); console log: $console"
: >"$results"
if [ "$arch" = aarch64 ]; then
	# shellcheck disable=SC2054 # QEMU's option values, commas and all
	results_dev=(-device virtio-serial-pci -chardev "file,id=results,path=$results"
		-device virtconsole,chardev=results)
else
	results_dev=(-serial "file:$results")
fi
# The kernel's lines of a console log ($console by default): only they are timestamped.
kernel_lines() { grep -aE '^\[ *[0-9]+\.[0-9]+\]' "${1:-$console}" || true; }

# A kernel that dies before the harness's init has said a word (its "guest: ..." line, before it
# loads any module) died of itself, not of anything under test: boot once more, and say so, with
# the first boot's log kept as console.log.1. A second death is judged as any other.
rm -f "$console.1"
for try in 1 2; do
	start=$(date +%s)
	timeout "$VM_TIMEOUT" "${qemu[@]}" -initrd "$out/initramfs.cpio" -append "$cmdline" \
		-serial "file:$console" "${results_dev[@]}" >"$out/qemu.log" 2>&1 &
	qpid=$!
	# Show each test's line as the guest reports it.
	tail -n +1 -f --pid="$qpid" "$results" | grep --line-buffered -v '^RESULT' || true
	rc=0
	wait "$qpid" || rc=$?
	elapsed=$(($(date +%s) - start))
	if [ "$try" = 2 ] || [ "$rc" = 124 ] || [ -s "$results" ] ||
		grep -aq '^guest: .* CPUs, tests:' "$console"; then
		break
	fi
	mv "$console" "$console.1"
	echo "guest: the kernel died before user space had loaded anything (qemu exit $rc); its" \
		"log: $console.1; booting once more. Its last lines:"
	kernel_lines "$console.1" | grep -aE "$kernel_bad" | head -n 5
done

# Failures the caller found before booting (tests/debian/run.sh: install and DKMS).
fails=$(($(grep -c '^FAIL' "$results" || true) + ${CSF_HOST_FAILS:-0}))
problems=()
if [ "$rc" = 124 ]; then
	problems+=("guest timed out after ${VM_TIMEOUT}s (VM_TIMEOUT)")
elif ! grep -q '^RESULT' "$results"; then
	problems+=("guest died before reporting (qemu exit $rc)")
fi
# Only the kernel's lines (kernel_lines): test output on the same console must not count. Nor
# what a test made the kernel say on purpose, between the markers of tests/harness/vm-inner.sh,
# unless it is a report no test provokes on purpose (kernel_fatal). -a: a test may write bytes that
# are not text to the console (the fuzzer does), after which grep would otherwise stop at "binary
# file matches" and see no report that follows.
{
	kernel_lines | awk '/csf-harness: expected kernel messages begin/ { skip = 1 }
		!skip { print }
		/csf-harness: expected kernel messages end/ { skip = 0 }' | grep -aE "$kernel_bad" || true
	kernel_lines | grep -aE "$kernel_fatal" || true
} >"$out/kernel-problems.log"
if [ -s "$out/kernel-problems.log" ]; then
	problems+=("kernel reported problems:")
fi

for p in "${problems[@]}"; do
	echo "FAIL harness ($p)"
	fails=$((fails + 1))
done
if [ -s "$out/kernel-problems.log" ]; then
	head -n 20 "$out/kernel-problems.log"
fi
# Why each failed test failed: its failed checks, each after the three lines the test printed
# before it (what it measured), so that a log which keeps only this output (CI's) says it.
failed=" $(sed -n 's/^FAIL \([^ ]*\) .*/\1/p' "$results" | tr '\n' ' ')"
if [ "$failed" != " " ]; then
	tr -d '\r' <"$console" | awk -v failed="$failed" '
		/^\[ *[0-9]+\.[0-9]+\]/ { next }
		/^=== / { t = $2; sub(/:$/, "", t); n = 0; shown = 0; next }
		t == "" || index(failed, " " t " ") == 0 || shown >= 40 { next }
		/^#   FAIL |^not ok / {
			for (i = n > 3 ? n - 3 : 0; i < n; i++)
				print "  " t ": " r[i % 3]
			print "  " t ": " $0
			shown += (n > 3 ? 3 : n) + 1
			n = 0
			next
		}
		{ r[n++ % 3] = $0 }' | cut -c1-300
fi
if [ "${#problems[@]}" -gt 0 ]; then
	echo "--- last 40 lines of $console ---"
	tail -n 40 "$console" | tr -d '\r' | cat -v
	echo "---"
	[ -s "$out/qemu.log" ] && cat "$out/qemu.log"
fi
echo "guest: done in ${elapsed}s"
echo "RESULT $fails"
[ "$fails" = 0 ]
