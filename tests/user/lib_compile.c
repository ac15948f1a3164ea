// SPDX-License-Identifier: GPL-2.0
/*
 * lib_compile: the library compiles warning-free as C11 and as C++ with gcc and clang
 * ("make lib-check" builds this file each way with -Wall -Wextra -Werror) and every public
 * function can be called from both; and (objdump of the object) that the library never executes
 * CPUID, which faults under CPUID faulting. Nothing here runs.
 */
#include "../../lib/coarse_stat_fs.h"

int main(void)
{
	struct csf_snap a, b;
	struct csf_cpu_snap c;
	struct csf_cpu_row rows[4];
	char buf[CSF_DIFF_BUFSZ];
	uint64_t t0 = csf_rdtsc(), when;

	if (csf_thread_snap(&a) || csf_thread_snap(&b))
		return 1;
	if (csf_format_diff(buf, sizeof(buf), &a, &b) < 0 || csf_thread_cyc(CSF_ONCPU, &when))
		return 1;
	csf_page_snap(&a.p, &b);
	{
		struct csf_thread_hist h;

		if (csf_thread_hist(&h) || csf_page_hist(&a.p, &h))
			return 1;
	}
	if (csf_page_cyc(&b.p, CSF_RUNQ) == 1)
		return 1;
	if (csf_cpu_snap(&c, CSF_CPU_ALL) || csf_cpu_count() < 1 ||
	    csf_cpu_snap_all(rows, 4, &when) < 2)
		return 1;
	csf_cpu_unmap();
	return (int)(csf_cyc_to_ns(&b.p.hdr, csf_rdtsc() - t0) & 1);
}
