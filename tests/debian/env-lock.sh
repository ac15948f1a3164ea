# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Sourced. env_lock ROOT SUITE: hold SUITE's environment (its root ROOT, from suite-env.sh)
# until the calling shell exits. Everything that builds in the environment's /csf, or boots a
# guest from it, holds this lock, so that two runs (another tree's check, a lint, a compdb) never
# replace each other's files. Exports CSF_ENV_LOCKED so that in-env.sh, run from under the
# holder, does not wait for the holder.
env_lock() {
	[ "${CSF_ENV_LOCKED:-}" != "$2" ] || return 0
	exec 9>"$1/../run.lock"
	if ! flock -n 9; then
		echo "env-lock[$2]: waiting for another run in the $2 environment to finish" >&2
		flock 9
	fi
	CSF_ENV_LOCKED=$2
	export CSF_ENV_LOCKED
}
