#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The guest's /init: load the module, mount it, run the tests named on the kernel command line
# (csf.tests=a,b,c), check that rmmod is refused while a thread is registered and accepted
# afterwards, check the kernel log, and power off.
#
# Test output goes to the console (ttyS0, ttyAMA0 on arm64: the host's console.log). One line
# per test, and a final "RESULT <failures>", also go to ttyS1 (arm64: the virtio console hvc0),
# which the host reads (results.log).

export PATH=/bin:/csf/bin
# A busybox of another architecture than the host's (the trixie-arm64 suite) could not list its
# applets when it was staged (tests/harness/stage-guest.sh): it links them itself.
[ -e /bin/mount ] || /bin/busybox --install -s /bin
# The services test's boot (csf.systemd=1, tests/list): Debian's systemd, which
# tests/debian/systemd-stage.sh staged, becomes PID 1 and runs this script again as a service,
# not PID 1, for the rest; the filesystems are then systemd's.
if [ "$$" = 1 ]; then
	mount -t proc proc /proc
	mount -t sysfs sys /sys
	mount -t devtmpfs dev /dev
	mount -t tmpfs tmp /tmp
	if grep -q 'csf\.systemd=1' /proc/cmdline && [ -x /csf-systemd ]; then
		exec /csf-systemd
	fi
	# As on a booted system: csfcat mem records its kdamond there.
	mkdir -p /run && mount -t tmpfs run /run
fi
exec </dev/null >/dev/console 2>&1

res=/dev/ttyS1
[ ! -e /dev/hvc0 ] || res=/dev/hvc0
fails=0
TEST_TIMEOUT=${TEST_TIMEOUT:-300}

report() { # STATUS NAME [DETAIL]
	line="$1 $2${3:+ ($3)}"
	echo "$line"
	echo "$line" >"$res"
	[ "$1" = FAIL ] && fails=$((fails + 1))
	return 0
}

finish() {
	echo "RESULT $fails"
	echo "RESULT $fails" >"$res"
	sync
	poweroff -f
}

# The last references go an RCU grace period after a thread's exit: give rmmod a moment.
rmmod_settled() {
	for _ in $(seq 20); do
		rmmod coarse_stat_fs 2>/dev/null && return 0
		sleep 0.1
	done
	rmmod coarse_stat_fs
}

uptime_ms() { awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime; }

# run NAME CMD...: run a test program; exit 0 passes, 4 skips (kselftest's KSFT_SKIP). It may
# run for TEST_TIMEOUT seconds, or next_timeout when that is set (for this run only).
run() {
	name=$1
	shift
	tmo=${next_timeout:-$TEST_TIMEOUT}
	next_timeout=
	echo "=== $name: $*"
	t0=$(uptime_ms)
	# Where it hangs, for the console log, just before it is killed: blocked tasks and every
	# CPU's backtrace.
	(
		sleep $((tmo - 3))
		echo w >/proc/sysrq-trigger
		echo l >/proc/sysrq-trigger
	) 2>/dev/null &
	dumper=$!
	timeout "$tmo" "$@"
	rc=$?
	kill "$dumper" 2>/dev/null
	ms=$(($(uptime_ms) - t0))
	secs="$((ms / 1000)).$((ms % 1000 / 100))s"
	case $rc in
	0) report PASS "$name" "$secs" ;;
	4) report SKIP "$name" "$secs" ;;
	124 | 143) report FAIL "$name" "timed out after ${tmo}s" ;;
	*) report FAIL "$name" "exit $rc, $secs" ;;
	esac
}

# Kernel messages that fail a run, wherever they come from (tests/klog-patterns, staged as
# /csf/klog-patterns); the second list even between the noise markers below, as no message a
# test provokes on purpose looks like them. Without them, the run fails.
klog() { # LIST: the list's patterns joined with "|"
	awk -v l="$1" '$1 == l { sub(/^[^ ]+ /, ""); p = p (p == "" ? "" : "|") $0 }
		END { print p }' /csf/klog-patterns
}
kernel_bad=$(klog bad)
kernel_fatal=$(klog fatal)
if [ -z "$kernel_bad" ] || [ -z "$kernel_fatal" ]; then
	report FAIL kernel-log "no kernel-log patterns in /csf/klog-patterns"
	kernel_bad=. kernel_fatal=.
fi

# A test that makes the kernel complain on purpose brackets that, and only that, with these
# markers; the checks (here and in tests/harness/guest.sh) skip what lies between them.
noise_begin() { echo "csf-harness: expected kernel messages begin ($1)" >/dev/kmsg; }
noise_end() { echo "csf-harness: expected kernel messages end ($1)" >/dev/kmsg; }
without_noise() {
	awk '/csf-harness: expected kernel messages begin/ { skip = 1 }
		!skip { print }
		/csf-harness: expected kernel messages end/ { skip = 0 }'
}

# The tests (tests/list, staged as /csf/tests.list). The default list: the default tests without
# a boot of their own, in the list's order. rmmod-race unloads and reloads the module, so it
# comes last but for init-order and dkms, which run after the rmmod checks.
list=/csf/tests.list
all_tests=$(awk '!/^#/ && $3 == "default" { for (i = 4; i <= NF; i++) if ($i ~ /^boot=/) next; print $1 }' \
	"$list" | tr '\n' ' ')

# run_listed NAME [ARGS...]: run NAME's program from the list with its options, and ARGS.
run_listed() {
	entry=$(awk -v n="$1" '$1 == n && $3 != "host" && $2 != "-" { print; exit }' "$list")
	[ -n "$entry" ] || return 1
	name=$1
	shift
	noise=0
	for opt in $(echo "$entry" | awk '{ for (i = 4; i <= NF; i++) print $i }'); do
		case $opt in
		timeout=*) next_timeout=${next_timeout:-${opt#timeout=}} ;;
		noise) noise=1 ;;
		arch=*)
			if [ "$(uname -m)" != "${opt#arch=}" ]; then
				next_timeout=
				report SKIP "$name" "${opt#arch=} only"
				return 0
			fi
			;;
		esac
	done
	[ "$noise" = 0 ] || noise_begin "$name"
	# shellcheck disable=SC2046 # the program's name, one word
	run "$name" $(echo "$entry" | awk '{ print $2 }') "$@"
	[ "$noise" = 0 ] || noise_end "$name"
	return 0
}

# csf.fuzz=SECONDS and csf.soak=SECONDS add the fuzzer and the soak to the default list (before
# rmmod-race) and say how long they run; csf.seed=SEED makes the fuzzer replay that seed.
param() { sed -n "s/.*csf\.$1=\([^ ]*\).*/\1/p" /proc/cmdline; }
fuzz_secs=$(param fuzz)
soak_secs=$(param soak)
fuzz_seed=$(param seed)
churn_threads=$(param churn) # csf.churn=N: threads t_churn registers (the debug suite: 10,000)
tests=$(param tests | tr , ' ')
if [ -z "$tests" ]; then
	extra="${fuzz_secs:+fuzz }${soak_secs:+soak }"
	tests=$(echo "$all_tests" | sed "s/rmmod-race/${extra}rmmod-race/")
fi
echo "guest: $(uname -r), $(nproc) CPUs, tests: $tests"

# Report a hung task well within the host's VM_TIMEOUT: after 20 s, or on the debug kernel after
# the kernel's default 120 s. Emulated, with KASAN and lockdep, it once kept t_fpu's probe arming
# 60 s and more behind the kprobe optimizer's RCU Tasks grace period (kprobe_mutex), with
# nothing stuck; a task that never wakes is still reported, long before its VM_TIMEOUT (2520 s).
case $(uname -r) in
*-csf-debug) echo 120 ;;
*) echo 20 ;;
esac >/proc/sys/kernel/hung_task_timeout_secs 2>/dev/null

# Kernel modules the tests need, in dependency order. null_blk: a disk whose reads take 10 ms,
# for iowait.
if [ -f /csf/kmods/order ]; then
	while read -r m; do
		case $m in
		null_blk.ko) args="nr_devices=1 irqmode=2 completion_nsec=10000000" ;;
		*) args="" ;;
		esac
		# shellcheck disable=SC2086 # module parameters
		insmod "/csf/kmods/$m" $args || echo "guest: could not load $m"
	done </csf/kmods/order
fi

# kmemleak (the debug suite's kernel): forget what boot left unreferenced; checked at the end.
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
kmemleak=/sys/kernel/debug/kmemleak
if [ -w "$kmemleak" ]; then
	echo scan >"$kmemleak"
	echo clear >"$kmemleak"
fi

if ! insmod /csf/coarse_stat_fs.ko; then
	report FAIL load "insmod coarse_stat_fs.ko failed"
	finish
fi
if ! mount -t coarse_stat_fs none /sys/kernel/coarse_stat_fs; then
	report FAIL mount "mount -t coarse_stat_fs failed"
	finish
fi

for t in $tests; do
	# TEST:PATTERN runs only the scenarios of TEST that PATTERN names (CSF_T_ONLY, tests/t.h).
	CSF_T_ONLY=
	case $t in
	*:*)
		CSF_T_ONLY=${t#*:}
		t=${t%%:*}
		;;
	esac
	export CSF_T_ONLY
	case $t in
	# Arguments worked out here; the rest comes from the list.
	churn) run_listed churn "${churn_threads:-2000}" ;; # the debug suite: 10,000 threads
	hotplug-watch | rmmod-race) run_listed "$t" /csf/coarse_stat_fs.ko ;; # loads it afresh
	fuzz)
		next_timeout=$((${fuzz_secs:-60} + 120))
		run_listed fuzz -d "${fuzz_secs:-60}" ${fuzz_seed:+-s "$fuzz_seed" -R}
		;;
	soak)
		next_timeout=$((${soak_secs:-30} + 120))
		run_listed soak "${soak_secs:-30}"
		;;
	bench) # make bench: the costs, then the slice watch's
		run_listed bench
		run_listed bench-slices --slices
		;;
	bench-slices) run_listed bench-slices --slices ;; # the slice watch's part alone
	fpu-bench) run_listed fpu-bench --fpu ;;
	# Harness self-tests: each must make the run fail (tests/debian/selftest.sh).
	selftest-warn) run "$t" insmod /csf/csf_selftest.ko action=warn ;;
	selftest-panic) run "$t" insmod /csf/csf_selftest.ko action=panic ;;
	selftest-hang) run "$t" sleep 100000 ;;
	# The debug kernel's checkers (tests/debian/selftest.sh debug): each bug must fail the run.
	selftest-uaf | selftest-leak | selftest-lockdep | selftest-sleep | selftest-ubsan | \
		selftest-list | selftest-refcount)
		run "$t" insmod /csf/csf_selftest.ko action="${t#selftest-}"
		;;
	selftest-noisy-lockdep) # between the noise markers: still a failure
		noise_begin "$t"
		run "$t" insmod /csf/csf_selftest.ko action=lockdep
		noise_end "$t"
		;;
	dkms | deb | init-order) ;; # after the rmmod checks, below
	*)
		run_listed "$t" && continue
		case $t in
		t_*) run "$t" "$t" ;; # any test program by name, for development
		*) report FAIL "$t" "no such test" ;;
		esac
		;;
	esac
done

# Unloading: refused while a thread is registered, even with no file open and the filesystem
# unmounted; accepted once that thread is gone.
t_hold >/tmp/hold &
hold=$!
for _ in $(seq 100); do
	grep -q ready /tmp/hold && break
	sleep 0.1
done
if ! grep -q ready /tmp/hold; then
	report FAIL rmmod-busy "t_hold did not register a thread"
elif ! umount /sys/kernel/coarse_stat_fs; then
	report FAIL rmmod-busy "umount failed with no file open"
elif rmmod coarse_stat_fs 2>/dev/null; then
	report FAIL rmmod-busy "rmmod succeeded while a thread was registered"
else
	report PASS rmmod-busy
fi
kill -9 "$hold"
wait "$hold" 2>/dev/null
umount /sys/kernel/coarse_stat_fs 2>/dev/null
# With the long-slice watch and the csf_fpu events on: unloading tears them down (probes,
# timers, the NMI handler) as it goes.
echo 50000 >/sys/module/coarse_stat_fs/parameters/slice_warn_us
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
echo 1 >/sys/kernel/tracing/events/csf_fpu/enable 2>/dev/null
cat /sys/kernel/debug/coarse_stat_fs/fpu_live 2>/dev/null
if rmmod_settled; then
	report PASS rmmod "with the slice watch and the csf_fpu events on"
else
	report FAIL rmmod "rmmod refused after the last registered thread exited"
fi
# A parameter out of its range at load time is refused, and nothing crashes; and once loaded
# and unloaded, the debugfs entries are gone with the module.
if insmod /csf/coarse_stat_fs.ko period_us=999 2>/dev/null; then
	rmmod coarse_stat_fs
	report FAIL load-param "insmod accepted period_us=999 (below 1000)"
elif [ -e /sys/kernel/debug/coarse_stat_fs ] && ! grep -q '^coarse_stat_fs ' /proc/modules; then
	report FAIL load-param "/sys/kernel/debug/coarse_stat_fs outlived the module"
else
	report PASS load-param
fi

# An init that fails late must not have registered the filesystem: until it returned, the
# filesystem could be mounted, and then the module freed under the mount. csf_selftest takes
# the mount point, so that init fails there, and counts register_filesystem() calls.
case " $tests " in
*" init-order "*)
	if ! insmod /csf/csf_selftest.ko action=occupy; then
		report FAIL init-order "could not load csf_selftest action=occupy"
	else
		# sysfs prints a stack dump for the mount point it finds taken.
		noise_begin init-order
		loaded=0
		insmod /csf/coarse_stat_fs.ko 2>/dev/null && loaded=1
		noise_end init-order
		regs=$(cat /sys/module/csf_selftest/parameters/fs_registrations)
		if [ "$loaded" = 1 ]; then
			report FAIL init-order "coarse_stat_fs loaded with its mount point taken"
			rmmod_settled
		elif [ "$regs" != 0 ]; then
			report FAIL init-order "a failing init registered the filesystem $regs times"
		elif grep -qw coarse_stat_fs /proc/filesystems; then
			report FAIL init-order "the filesystem stayed registered after a failed init"
		else
			report PASS init-order "a failing init registered nothing"
		fi
		rmmod csf_selftest
	fi
	;;
esac

# The module DKMS built (tests/install/dkms-test.sh): same sources, loads, mounts, serves a page.
dkms_ko=/csf/dkms/coarse_stat_fs.ko
case " $tests " in
*" dkms "*)
	if [ ! -f "$dkms_ko" ]; then
		report SKIP dkms "no DKMS-built module staged"
	elif [ "$(modinfo -F srcversion "$dkms_ko")" != "$(modinfo -F srcversion /csf/coarse_stat_fs.ko)" ]; then
		report FAIL dkms "srcversion differs from the module built from this tree"
	elif insmod "$dkms_ko" slice_warn_us=20000 &&
		mount -t coarse_stat_fs none /sys/kernel/coarse_stat_fs &&
		csfcat thread >/dev/null && csfcat cpu >/dev/null &&
		umount /sys/kernel/coarse_stat_fs && rmmod_settled; then
		report PASS dkms "loaded with the slice watch on, mounted, served both pages, unloaded"
	else
		report FAIL dkms "the DKMS-built module did not load, serve or unload"
	fi
	;;
esac

# The module DKMS built from the Debian package, with the packaged csfcat (deb-test.sh).
deb=/csf/deb
case " $tests " in
*" deb "*)
	if [ ! -f "$deb/coarse_stat_fs.ko" ] || [ ! -x "$deb/csfcat" ]; then
		report SKIP deb "no packaged module and csfcat staged"
	elif [ "$(modinfo -F srcversion "$deb/coarse_stat_fs.ko")" != "$(modinfo -F srcversion /csf/coarse_stat_fs.ko)" ]; then
		report FAIL deb "srcversion differs from the module built from this tree"
	elif insmod "$deb/coarse_stat_fs.ko" &&
		mount -t coarse_stat_fs none /sys/kernel/coarse_stat_fs &&
		"$deb/csfcat" thread >/dev/null && "$deb/csfcat" cpu >/dev/null &&
		"$deb/csfcat" cpu --prometheus /tmp/deb-cpu.prom >/dev/null &&
		grep -q '^csfcat_cpu_page_info{abi_version="1"} 1$' /tmp/deb-cpu.prom &&
		umount /sys/kernel/coarse_stat_fs && rmmod_settled; then
		report PASS deb "the packaged module loaded, mounted, served both pages to the packaged csfcat, unloaded"
	else
		report FAIL deb "the packaged module or csfcat did not load, serve or unload"
	fi
	;;
esac

if [ -w "$kmemleak" ]; then
	# Objects younger than 5 s are not reported yet.
	sleep 6
	echo scan >"$kmemleak"
	if grep -q unreferenced "$kmemleak"; then
		head -n 60 "$kmemleak"
		report FAIL kmemleak "unreferenced objects, see above"
	else
		report PASS kmemleak
	fi
fi

if { dmesg | without_noise | grep -E "$kernel_bad"; dmesg | grep -E "$kernel_fatal"; } >/tmp/bad; [ -s /tmp/bad ]; then
	cat /tmp/bad
	report FAIL kernel-log "kernel reported problems, see above"
else
	report PASS kernel-log
fi
finish
