#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# in-env.sh [--fresh] SUITE COMMAND: run the shell command line COMMAND as root inside SUITE's
# cached environment (see suite-env.sh), in /csf/src, with /proc mounted and KVER set to the
# suite's kernel version. --fresh first replaces /csf with a copy of the work tree (tracked and
# untracked files that git does not ignore), so builds for different suites never share object
# files and the work tree stays clean.
set -euo pipefail

fresh=0
if [ "${1:-}" = --fresh ]; then
	fresh=1
	shift
fi
suite=${1:?usage: in-env.sh [--fresh] SUITE COMMAND}
cmd=${2:?usage: in-env.sh [--fresh] SUITE COMMAND}
top=$(cd "$(dirname "$0")/../.." && pwd)

root=$("$top/tests/debian/suite-env.sh" "$suite")
# shellcheck source=tests/debian/env-lock.sh
. "$top/tests/debian/env-lock.sh"
env_lock "$root" "$suite"
kver=$(ls "$root/usr/lib/modules")
if [ "$(echo "$kver" | wc -w)" != 1 ]; then
	echo "in-env[$suite]: expected one kernel in $root, found: $kver" >&2
	exit 1
fi

existing() { # the NUL-separated paths on stdin that exist (skips deleted, uncommitted files)
	while IFS= read -r -d '' f; do
		[ ! -e "$top/$f" ] || printf '%s\0' "$f"
	done
}
if [ "$fresh" = 1 ]; then
	rm -rf "$root/csf"
	mkdir -p "$root/csf/src"
	if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
		git -C "$top" ls-files -z --cached --others --exclude-standard | existing |
			tar -C "$top" --null -T - -cf - | tar -C "$root/csf/src" -xf -
	else
		tar -C "$top" --exclude=./build --exclude=./.git -cf - . | tar -C "$root/csf/src" -xf -
	fi
fi

# A private mount namespace: /proc (objtool on 7.x reads it) vanishes with the command.
# shellcheck disable=SC2016 # expanded by the inner shell
exec unshare -m --propagation private sh -c \
	'mount -t proc proc "$1/proc" && exec chroot "$1" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root KVER="$2" sh -c "cd /csf/src || exit 1; $3"' \
	sh "$root" "$kver" "$cmd"
