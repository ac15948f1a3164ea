#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# What "make demo" shows in the guest, where init has loaded and mounted the module: the module
# and its files, then each page through csfcat.
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
