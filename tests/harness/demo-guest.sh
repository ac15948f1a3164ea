#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# What "make demo" shows in the guest, where init has loaded and mounted the module: the module
# and its files, then each page through csfcat, and the long-slice watch at work.
set -e

show() {
	echo "\$ $*"
	"$@"
}

show grep coarse_stat_fs /proc/modules /proc/filesystems /proc/mounts
show ls -l /sys/kernel/coarse_stat_fs
show csfcat cpu
show csfcat self 100
show eventloop -n 40

# The long-slice watch: a thread alone on its CPU holds it for the whole spin of csfcat self,
# and a stopper callback holds CPU 1 with interrupts off; both reported, the stopper's stack
# taken through an NMI.
echo 20000 >/sys/module/coarse_stat_fs/parameters/slice_warn_us
show csfcat self 100
show insmod /csf/csf_selftest.ko action=stopper stop_cpu=1 stop_ms=100
show csfcat slices --dump # before rmmod: stacks are symbolized when read
echo "\$ timeout 1 cat /sys/kernel/coarse_stat_fs/slices | tail -n 2"
timeout 1 cat /sys/kernel/coarse_stat_fs/slices | tail -n 2
rmmod csf_selftest
echo 0 >/sys/module/coarse_stat_fs/parameters/slice_warn_us
