// SPDX-License-Identifier: GPL-2.0
/*
 * csfcat cpu --prometheus FILE: of the cpu page, only what node_exporter does not export
 * already. Its cpu collector exports every time the rows hold (node_cpu_seconds_total,
 * node_cpu_guest_seconds_total) from /proc/stat, which the rows copy: what is left is the page
 * itself. The metrics are described in docs/prometheus.md, "csfcat cpu".
 */
#include <stdio.h>

#include "../include/uapi/coarse_stat_fs.h"
#include "csfcat.h"
#include "prom.h"

int cpu_prom_write(const char *path, uint32_t period_us)
{
	struct prom_file p;

	if (prom_begin(&p, "cpu", path))
		return -1;
	prom_family(
		&p, "csfcat_cpu_page_info", "gauge",
		"The coarse_stat_fs module serves its cpu page, in this ABI version; always 1.");
	fprintf(p.f, "csfcat_cpu_page_info{abi_version=\"%d\"} 1\n", CSF_ABI_VERSION);
	prom_family(&p, "csfcat_cpu_page_refresh_period_seconds", "gauge",
		    "How often the kernel refreshes the cpu page while a process maps it "
		    "(period_us): how stale its rows can be.");
	fprintf(p.f, "csfcat_cpu_page_refresh_period_seconds %.6f\n", period_us / 1e6);
	return prom_commit(&p);
}
