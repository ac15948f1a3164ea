#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# lint-selftest.sh: show that "make lint" catches what it must. In a scratch copy of the tree,
# each case first runs one check on the clean copy (it must pass), then plants one finding and
# runs it again (it must fail):
#   format      a badly indented line in kmod/main.c           -> lint-format
#   tidy        memset() with a fill value that is not a byte  -> lint-tidy-user
#   shell       an unquoted expansion of an unset variable     -> lint-shell
# Prints one line per case and a final "RESULT <failures>".
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fails=0

git -C "$top" ls-files -z | (cd "$top" && xargs -0 tar -cf - --) | tar -C "$scratch" -xf -
cd "$scratch" || exit 1
git init -q && git add -A

# expect CASE CHECK FILE PLANT: CHECK passes on the clean copy and fails once PLANT (a line)
# is added to FILE.
expect() {
	local name=$1 check=$2 file=$3 plant=$4
	if ! LINT_TIDY_FILES=tools/csfcat.c scripts/lint.sh "$check" >"$scratch/$name.clean" 2>&1; then
		echo "FAIL lint-catches-$name (lint-$check fails on the clean tree)"
		head -n 20 "$scratch/$name.clean"
		fails=$((fails + 1))
		return
	fi
	cp "$file" "$scratch/saved"
	printf '%s\n' "$plant" >>"$file"
	if LINT_TIDY_FILES=tools/csfcat.c scripts/lint.sh "$check" >"$scratch/$name.planted" 2>&1; then
		echo "FAIL lint-catches-$name (lint-$check passed with: $plant)"
		fails=$((fails + 1))
	else
		echo "PASS lint-catches-$name ($(grep -m1 -E 'warning|error|SC[0-9]+' \
			"$scratch/$name.planted" | sed 's/^ *//' | cut -c1-100))"
	fi
	cp "$scratch/saved" "$file"
}

expect format format kmod/main.c 'static  int   planted_badly_formatted ( void ) { return 0 ; }'
expect tidy tidy-user tools/csfcat.c \
	'static void __attribute__((unused)) planted(char *b) { memset(b, 300, 8); }'
# shellcheck disable=SC2016 # the planted line must hold the unexpanded variable
expect shell shell tests/harness/check-all.sh 'echo $planted_but_never_set'

echo "RESULT $fails"
[ "$fails" = 0 ]
