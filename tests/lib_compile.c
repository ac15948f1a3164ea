// SPDX-License-Identifier: GPL-2.0
/*
 * lib_compile: the library compiles warning-free as C11 and as C++ with gcc and clang
 * ("make lib-check" builds this file each way with -Wall -Wextra -Werror) and every public
 * function can be called from both. Nothing here runs.
 */
#include "../lib/coarse_stat_fs.h"

int main(void)
{
	struct csf_snap a, b;
	char buf[CSF_DIFF_BUFSZ];
	uint64_t t0 = csf_rdtsc();

	if (csf_thread_snap(&a) || csf_thread_snap(&b))
		return 1;
	if (csf_format_diff(buf, sizeof(buf), &a, &b) < 0)
		return 1;
	return (int)(csf_cyc_to_ns(&b.p.hdr, csf_rdtsc() - t0) & 1);
}
