#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# lint.sh [CHECK...]: the static checks of "make lint" (all by default), one line each,
# "PASS lint-NAME" or "FAIL lint-NAME" with the findings; fails if any check fails.
#
#   format      clang-format --dry-run with .clang-format (kernel style, 100 columns)
#   tidy-user   clang-tidy on user space (.clang-tidy, tests/.clang-tidy)
#   tidy-kmod   clang-tidy on the module (kmod/.clang-tidy), on kbuild's compile commands
#   sparse      sparse on the module (make C=2), with the kernel's own flags
#   checkpatch  the kernel's checkpatch.pl on the module (from Debian's linux-source package)
#   shell       shellcheck on every shell script in the tree
#   units       systemd-analyze verify on the systemd units; module names in modules-load.d
#   metrics     promtool check metrics on every Prometheus file csfcat writes (tests/user/t_prom.c),
#               promtool check rules on the alert rules (packaging/csfcat-rules.yml)
#   deb         make deb: the Debian packages build, and lintian finds no error or warning
#   versions    the version in dkms.conf, kmod/main.c, the Makefile and the Debian changelog agree
#
# The module's checks build it in Debian trixie's environment (tests/debian/in-env.sh), so they
# need root and work without the running kernel's headers.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
all=(format tidy-user tidy-kmod sparse checkpatch shell units metrics deb versions)
checks=("$@")
[ "${#checks[@]}" -gt 0 ] || checks=("${all[@]}")
suite=${LINT_SUITE:-trixie}
cache=${CSF_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/coarse_stat_fs}
out=$top/build/lint
# shellcheck source=tests/debian/env-lock.sh
. "$top/tests/debian/env-lock.sh"
mkdir -p "$out"
fails=0
exec 3>&2 # progress of long steps, while each check's own output goes to its log

c_files() { git ls-files '*.c' '*.h'; }
# LINT_TIDY_FILES limits clang-tidy on user space to some files (lint-selftest.sh does).
user_c_files() {
	echo "${LINT_TIDY_FILES:-$(git ls-files ':(glob)tools/*.c' ':(glob)examples/*.c' \
		':(glob)tests/*/*.c' ':!:tests/harness/selftest/*')}"
}
shell_files() {
	git ls-files | while read -r f; do
		case ${f##*/} in
		*.sh) echo "$f" ;;
		*.*) ;;
		*) [ -f "$f" ] && head -n 1 "$f" | grep -Eq '^#!.*/(env )?(ba)?sh' && echo "$f" ;;
		esac
	done
}

# Build the module in the suite's environment; prints nothing, logs to $out/kmod-build.log.
kmod_built=""
build_kmod() {
	[ -z "$kmod_built" ] || return 0
	root=$(tests/debian/suite-env.sh "$suite" 2>&3) || return 1
	env_lock "$root" "$suite"
	# shellcheck disable=SC2016 # $KVER is expanded inside the environment
	tests/debian/in-env.sh --fresh "$suite" \
		'make -C /lib/modules/$KVER/build M=/csf/src/kmod W=1 modules' \
		>"$out/kmod-build.log" 2>&1 || return 1
	root=$(tests/debian/suite-env.sh "$suite" 2>/dev/null) || return 1
	kver=$(ls "$root/usr/lib/modules")
	kdir=$(chroot "$root" readlink -f "/lib/modules/$kver/build")
	kmod_built=1
}

check_format() {
	# shellcheck disable=SC2046 # file names without spaces
	clang-format --dry-run --Werror $(c_files)
}

# clang-tidy's findings, from its output in $out/NAME.tidy; its exit status says less.
tidy_findings() {
	! grep -E 'warning:|error:' "$out/$1.tidy"
}

check_tidy_user() {
	# shellcheck disable=SC2046
	clang-tidy --quiet $(user_c_files) -- -std=gnu11 -Wall -Wextra -pthread \
		>"$out/user.tidy" 2>&1
	tidy_findings user
}

check_tidy_kmod() {
	if ! build_kmod; then
		echo "cannot build the module in Debian $suite's environment"
		[ ! -f "$out/kmod-build.log" ] || tail -n 20 "$out/kmod-build.log"
		return 1
	fi
	python3 scripts/kmod-compdb.py --kmod "$root/csf/src/kmod" --kdir "$kdir" --root "$root" \
		--src-map "/csf/src=$top" -o "$out/compile_commands.json" || return 1
	# The files kbuild compiled for this suite's architecture (not another's, slice_stack_arm64.c).
	# shellcheck disable=SC2046 # paths without blanks
	clang-tidy --quiet -p "$out" $(python3 -c 'import json, os, sys
print(" ".join(sorted(os.path.relpath(e["file"]) for e in json.load(open(sys.argv[1]))
                      if os.path.relpath(e["file"]).startswith("kmod/")
                      and not e["file"].endswith(".mod.c"))))' "$out/compile_commands.json") \
		>"$out/kmod.tidy" 2>&1
	tidy_findings kmod
}

check_sparse() {
	root=$(tests/debian/suite-env.sh "$suite" 2>&3) || return 1
	env_lock "$root" "$suite"
	# shellcheck disable=SC2016 # $KVER is expanded inside the environment
	tests/debian/in-env.sh --fresh "$suite" \
		'make -C /lib/modules/$KVER/build M=/csf/src/kmod C=2 modules 2>&1' >"$out/sparse.log" 2>&1 ||
		{ tail -n 20 "$out/sparse.log"; return 1; }
	grep -q 'CHECK   /csf/src/kmod/thread.c' "$out/sparse.log" ||
		{ echo "sparse did not run (see $out/sparse.log)"; return 1; }
	! grep -E '^/csf/src/.*(warning|error):' "$out/sparse.log"
}

# checkpatch.pl and its data files, from the suite's linux-source package, cached.
fetch_checkpatch() {
	local dir=$cache/checkpatch
	[ -x "$dir/scripts/checkpatch.pl" ] && return 0
	echo "lint: fetching checkpatch.pl from $suite's linux-source package (once, ~150 MB)" >&3
	tests/debian/suite-env.sh "$suite" 2>&3 >/dev/null || return 1
	mkdir -p "$dir"
	# shellcheck disable=SC2016 # expanded inside the environment
	tests/debian/in-env.sh "$suite" '
		set -e
		pkg=$(apt-cache depends linux-source | sed -n "s/^ *Depends: \(linux-source-[0-9.]*\)$/\1/p" | head -n 1)
		rm -rf /tmp/checkpatch && mkdir -p /tmp/checkpatch && cd /tmp/checkpatch
		apt-get -q -o Acquire::Check-Valid-Until=false update >/dev/null
		apt-get -q download "$pkg" >/dev/null
		dpkg-deb --fsys-tarfile "$pkg"_*.deb | tar -xf - --wildcards "./usr/src/$pkg.tar.*"
		tar -xf usr/src/$pkg.tar.* --strip-components=1 "$pkg/scripts/checkpatch.pl" \
			"$pkg/scripts/spelling.txt" "$pkg/scripts/const_structs.checkpatch"
		rm -rf usr ./*.deb' >"$out/checkpatch-fetch.log" 2>&1 || return 1
	root=$(tests/debian/suite-env.sh "$suite" 2>/dev/null) || return 1
	cp -r "$root/tmp/checkpatch/scripts" "$dir/"
	rm -rf "$root/tmp/checkpatch"
}

check_checkpatch() {
	fetch_checkpatch || { tail -n 20 "$out/checkpatch-fetch.log"; return 1; }
	# The module is out of tree: no tree, and no MAINTAINERS or Kconfig to check against.
	local cp=("$cache/checkpatch/scripts/checkpatch.pl" --no-tree --strict --terse --show-types
		--max-line-length=100) ignore=FILE_PATH_CHANGES,SPDX_LICENSE_TAG rc=0 f
	local code=() trace=()
	for f in kmod/*.c kmod/*.h tests/harness/selftest/*.c; do
		case $f in
		*trace.h) trace+=("$f") ;;
		*) code+=("$f") ;;
		esac
	done
	perl "${cp[@]}" --ignore "$ignore" -f "${code[@]}" || rc=1
	# Trace event headers are laid out as the TRACE_EVENT() macros want, as the kernel's own
	# are, and keep TP_printk()'s format in one string however long.
	perl "${cp[@]}" --ignore "$ignore,OPEN_ENDED_LINE,PARENTHESIS_ALIGNMENT,SPACING,LONG_LINE" \
		-f "${trace[@]}" || rc=1
	return "$rc"
}

check_shell() {
	# shellcheck disable=SC2046
	shellcheck -x $(shell_files)
}

check_units() {
	local bad=0 unit tmp found
	# The services run csfcat where make install puts it (@BINDIR@): verify them with the
	# csfcat built here in its place, so that verify checks the command exists.
	make --no-print-directory -s tools/csfcat || return 1
	tmp=$(mktemp -d)
	for unit in packaging/*.mount packaging/*.service; do
		[ -f "$unit" ] || continue
		sed "s|@BINDIR@|$top/tools|g" "$unit" >"$tmp/${unit##*/}"
		# Its findings, whatever its exit status says (it is 0 for some of them).
		if ! found=$(systemd-analyze verify --man=no "$tmp/${unit##*/}" 2>&1) ||
			[ -n "$found" ]; then
			echo "$found"
			bad=1
		fi
	done
	rm -rf "$tmp"
	# modules-load.d: module names, one per line, or comments.
	grep -Evh '^(#.*|[A-Za-z0-9_-]+|)$' packaging/*.conf && bad=1
	[ -f packaging/coarse_stat_fs.conf ] || { echo "no packaging/coarse_stat_fs.conf"; bad=1; }
	return "$bad"
}

check_metrics() {
	make --no-print-directory -s tools/csfcat build/tests/t_prom || return 1
	promtool check rules packaging/csfcat-rules.yml || return 1
	PATH="$top/tools:$PATH" CSF_FIXTURES="$top/tests/fixtures" CSF_PROMTOOL=required \
		CSF_T_ONLY=promtool build/tests/t_prom
}

check_deb() {
	scripts/deb.sh
}

check_versions() {
	local d m k c
	d=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
	m=$(sed -n 's/^MODULE_VERSION("\(.*\)");/\1/p' kmod/main.c)
	k=$(sed -n 's/^VERSION := //p' Makefile)
	c=$(sed -n '1s/^coarse-stat-fs (\([^)]*\)).*/\1/p' packaging/debian/changelog)
	[ -n "$d" ] && [ "$d" = "$m" ] && [ "$d" = "$k" ] && [ "$d" = "$c" ] && return 0
	echo "dkms.conf '$d', kmod/main.c '$m', Makefile '$k', packaging/debian/changelog '$c'"
	return 1
}

for c in "${checks[@]}"; do
	fn=check_${c//-/_}
	if ! declare -F "$fn" >/dev/null; then
		echo "FAIL lint-$c (no such check; checks: ${all[*]})"
		fails=$((fails + 1))
		continue
	fi
	echo "lint: $c" >&2
	if "$fn" >"$out/$c.log" 2>&1; then
		echo "PASS lint-$c"
	else
		echo "FAIL lint-$c"
		head -n 40 "$out/$c.log"
		fails=$((fails + 1))
	fi
done
[ "$fails" = 0 ]
